import { expect, type APIRequestContext, type Page } from "@playwright/test";
import type { WorkflowDefinitionData } from "@/lib/model/workflows/workflow-definition";
import { AgentsPage } from "./agents-page";
import { signIn } from "./login-page";

export async function publish(admin: APIRequestContext, doc: WorkflowDefinitionData): Promise<void> {
  const res = await admin.post("/api/v1/workflows", { data: doc });
  expect(res.status(), await res.text()).toBe(201);
}

/** An agent whose token reaches every workflow, present and future, made by an admin in the console. */
export async function everyWorkflowToken(page: Page, name: string): Promise<string> {
  await signIn(page, "admin", "/admin/agents");
  const agents = new AgentsPage(page);
  await agents.fillCreate({ name, workflows: [], tools: [] });
  await agents.createForm.getByLabel("Every workflow, including ones added later").check();
  await agents.submitCreate();
  return (await agents.shownToken(agents.createForm)).secret;
}

export class TaskDriver {
  constructor(
    private readonly request: APIRequestContext,
    private readonly token: string,
  ) {}

  private async post(url: string, data: unknown): Promise<{ id: string; version: number; status: string }> {
    const res = await this.request.post(url, { data, headers: { Authorization: `Bearer ${this.token}` } });
    expect(res.ok(), `${url} → ${res.status()} ${await res.text()}`).toBe(true);
    const body = (await res.json()) as { task?: { id: string; version: number; status: string } };
    return body.task ?? (body as unknown as { id: string; version: number; status: string });
  }

  create(workflow: string, id: string) {
    return this.post("/api/v1/tasks", { workflow, task_id: id, intent_id: `intent-${id}` });
  }

  move(task: { id: string; version: number }, to: string) {
    return this.post(`/api/v1/tasks/${encodeURIComponent(task.id)}/transitions`, {
      expected_version: task.version,
      to,
    });
  }
}
