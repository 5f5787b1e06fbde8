import { randomUUID } from "node:crypto";
import { expect, test } from "@playwright/test";
import { Annotation, END, START, StateGraph } from "@langchain/langgraph";
import { demoAgent } from "@/lib/config/demo-accounts";
import { VeritySaver } from "@/sdk/langgraph/verity-saver";
import { axeViolations } from "../pages/axe";
import { signIn } from "../pages/login-page";

/**
 * A LangGraph graph run by an agent with VeritySaver is a task a person can
 * open: the thread's checkpoints on the task page, each a version of the
 * task in its history with its audit entry.
 */
const shots = process.env.E2E_SHOTS_DIR ?? "test-results/langgraph-screenshots";
const Steps = Annotation.Root({
  steps: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }),
});

test("an operator sees a LangGraph thread's checkpoints on its task and in its history", async ({ page, baseURL }) => {
  const namespace = `console-${randomUUID().slice(0, 8)}`;
  const saver = new VeritySaver({ baseUrl: baseURL!, token: demoAgent.token, namespace });
  const graph = new StateGraph(Steps)
    .addNode("plan", () => ({ steps: ["plan"] }))
    .addNode("act", () => ({ steps: ["act"] }))
    .addEdge(START, "plan")
    .addEdge("plan", "act")
    .addEdge("act", END)
    .compile({ checkpointer: saver });
  await graph.invoke({ steps: [] }, { configurable: { thread_id: "support-ticket-77" } });
  const taskId = await saver.taskIdOf("support-ticket-77");
  await saver.close();
  expect(taskId).toBeTruthy();

  await signIn(page, "operator", `/tasks/${taskId}`);
  const panel = page.getByRole("region", { name: "LangGraph thread" });
  await expect(panel).toContainText("support-ticket-77");
  await expect(panel).toContainText(namespace);
  // input, plan, act: one checkpoint per superstep, plus the one before the input.
  await expect(panel.getByRole("row")).toHaveCount(1 + 4);
  expect(await axeViolations(page)).toEqual([]);
  await panel.scrollIntoViewIfNeeded();
  await page.screenshot({ path: `${shots}/langgraph-thread.png` });

  await page.goto(`/tasks/${taskId}/history`);
  await expect(page.getByText(/LangGraph checkpoint/).first()).toBeVisible();
});
