import { expect, test } from "@playwright/test";
import { signIn } from "../pages/login-page";

test("the workflows page shows each definition with its digest, graph and edge table", async ({ page }) => {
  await signIn(page, "engineer", "/workflows");
  for (const name of ["agent-task", "delivery"]) {
    const card = page.getByRole("region", { name: new RegExp(name) });
    await expect(card.getByRole("img", { name: `State machine of ${name} v1` })).toBeVisible();
    await expect(card).toContainText("sha256:");
    await expect(card.getByRole("table", { name: `Transitions of ${name} v1` })).toBeVisible();
  }
  const agentTask = page.getByRole("region", { name: /agent-task/ });
  const resolve = agentTask.getByRole("row", { name: /WAITING_FOR_HUMAN HUMAN_RESOLVED/ });
  await expect(resolve).toContainText("person");
  await expect(agentTask.getByRole("table", { name: /Transitions refused on purpose/ })).toContainText("completion_requires_validation");
});
