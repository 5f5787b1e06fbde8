import { expect, type APIRequestContext, type Locator, type Page } from "@playwright/test";
import { demoAgent } from "@/lib/config/demo-accounts";
import type { SeededTask } from "./agent-seed";
import { sandboxUrl } from "./reviews-seed";

/**
 * Page objects of the checkpoint pages, and the seeding the checkpoint tests
 * need, done the way an agent does it: through /api/v1 with the demo agent's
 * bearer token (checkpoints on demand, a tool call with its receipt, a lease).
 */
const auth = { Authorization: `Bearer ${demoAgent.token}` };

async function post(request: APIRequestContext, url: string, data: unknown): Promise<Record<string, unknown>> {
  const res = await request.post(url, { data, headers: auth });
  expect(res.ok(), `${url} → ${res.status()} ${await res.text()}`).toBe(true);
  return (await res.json()) as Record<string, unknown>;
}

export interface SeededCheckpoint {
  id: string;
  stateVersion: number;
}

/** A checkpoint of the task as it is at `task.version`, taken by the agent on demand. */
export async function takeCheckpoint(request: APIRequestContext, task: SeededTask): Promise<SeededCheckpoint> {
  const body = (await post(request, `/api/v1/tasks/${encodeURIComponent(task.id)}/checkpoints`, {
    expected_version: task.version,
  })) as { id: string; state_version: number };
  return { id: body.id, stateVersion: body.state_version };
}

/**
 * A CRM note through the ledger, really added at the sandbox provider under
 * the execution's idempotency key and reported with the provider's answer as
 * evidence: a receipt the server's verifier also finds at the provider. The
 * task ends RUNNING, two versions on.
 */
export async function addNoteWithReceipt(
  request: APIRequestContext,
  task: SeededTask,
  toolCallId = "note-1",
): Promise<{ task: SeededTask; executionId: string }> {
  const note = { customer_id: "cus_ckpt", text: "refund explained to the customer" };
  const intent = (await post(request, `/api/v1/tasks/${encodeURIComponent(task.id)}/executions`, {
    tool_call_id: toolCallId,
    tool: "crm.add_note",
    request: note,
    expected_version: task.version,
  })) as { kind: string; execution: { id: string; attempt_id: string; idempotency_key: string } };
  expect(intent.kind).toBe("proceed");
  const { id, attempt_id, idempotency_key } = intent.execution;
  await post(request, `/api/v1/executions/${id}/sent`, { attempt_id });
  const added = await fetch(`${sandboxUrl}/v1/crm/customers/${note.customer_id}/notes`, {
    method: "POST",
    headers: { "Content-Type": "application/json", "Idempotency-Key": idempotency_key },
    body: JSON.stringify({ text: note.text, metadata: { execution_id: id, task_id: task.id } }),
  });
  expect(added.ok, `sandbox note → ${added.status}`).toBe(true);
  const evidence = (await added.json()) as Record<string, unknown>;
  const outcome = (await post(request, `/api/v1/executions/${id}/outcome`, {
    attempt_id,
    outcome: "succeeded",
    result: { note_id: evidence.id },
    evidence,
  })) as {
    task: { id: string; version: number; status: string };
  };
  return { task: { id: task.id, version: outcome.task.version, status: outcome.task.status }, executionId: id };
}

/** The agent takes the task's lease, as a worker does before working on it. */
export async function acquireLease(request: APIRequestContext, taskId: string): Promise<{ fencingToken: string }> {
  const body = (await post(request, `/api/v1/tasks/${encodeURIComponent(taskId)}/lease`, { ttl_seconds: 300 })) as {
    fencing_token: string;
  };
  return { fencingToken: body.fencing_token };
}

export class TaskCheckpointsPage {
  readonly heading: Locator;
  readonly timeline: Locator;
  readonly chart: Locator;
  readonly list: Locator;
  readonly rows: Locator;
  readonly emptyState: Locator;
  readonly takePanel: Locator;
  readonly readOnly: Locator;
  readonly restores: Locator;

  constructor(readonly page: Page) {
    this.heading = page.getByRole("heading", { level: 1, name: /^Checkpoints/ });
    this.timeline = page.getByRole("region", { name: "Timeline", exact: true });
    this.chart = this.timeline.locator(".ckpt-chart svg.recharts-surface").first();
    this.list = page.locator("section[aria-labelledby=ckpt-list-heading]");
    this.rows = page.locator("table.ckpt-table tbody tr");
    this.emptyState = this.list.locator(".empty-state");
    this.takePanel = page.getByRole("region", { name: "Take a checkpoint", exact: true });
    this.readOnly = page.getByRole("region", { name: "Read-only", exact: true });
    this.restores = page.locator(".ckpt-restore-attempt");
  }

  async goto(taskId: string): Promise<void> {
    await this.page.goto(`/tasks/${encodeURIComponent(taskId)}/checkpoints`);
  }

  row(checkpointId: string): Locator {
    return this.page.locator(`table.ckpt-table tbody tr[data-checkpoint-id="${checkpointId}"]`);
  }

  async open(checkpointId: string): Promise<void> {
    await this.row(checkpointId).getByRole("link").click();
    await this.page.waitForURL(`**/checkpoints/${checkpointId}`);
  }
}

export class CheckpointInspectorPage {
  readonly title: Locator;
  readonly integrity: Locator;
  readonly verdict: Locator;
  readonly checks: Locator;
  readonly verifyAgain: Locator;
  readonly diff: Locator;
  readonly snapshot: Locator;
  readonly receipts: Locator;
  readonly provenance: Locator;
  readonly restore: Locator;
  readonly planButton: Locator;
  readonly plan: Locator;
  readonly rewind: Locator;
  readonly reason: Locator;
  readonly confirm: Locator;
  readonly done: Locator;
  readonly alert: Locator;
  readonly history: Locator;
  readonly taskVersion: Locator;

  constructor(readonly page: Page) {
    this.title = page.getByRole("heading", { level: 1 });
    this.integrity = page.getByRole("region", { name: "Integrity", exact: true });
    this.verdict = this.integrity.locator(".ckpt-verdict");
    this.checks = this.integrity.locator("ol.ckpt-checks > li");
    this.verifyAgain = this.integrity.getByRole("button", { name: /Verify again|Verifying/ });
    this.diff = page.getByRole("region", { name: "Against the task now", exact: true });
    this.snapshot = page.getByRole("region", { name: "Snapshot", exact: true });
    this.receipts = page.getByRole("region", { name: "Tool receipts", exact: true });
    this.provenance = page.getByRole("region", { name: "Provenance", exact: true });
    this.restore = page.getByRole("region", { name: "Restore", exact: true });
    this.planButton = this.restore.getByRole("button", { name: /^Plan/ });
    this.plan = this.restore.getByTestId("restore-plan");
    this.rewind = this.restore.getByRole("checkbox", { name: "Rewind to this older checkpoint" });
    this.reason = this.restore.getByLabel("Reason (required)");
    this.confirm = this.restore.getByRole("button", { name: /^(Restore|Rewind) as version/ });
    this.done = this.restore.locator(".notice--success");
    this.alert = this.restore.locator(".notice[role=alert]").first();
    this.history = page.locator(".ckpt-restore-attempt");
    this.taskVersion = page.locator(".page-header .version-pill");
  }

  async goto(checkpointId: string): Promise<void> {
    await this.page.goto(`/checkpoints/${encodeURIComponent(checkpointId)}`);
  }

  effectGroup(
    group: "skippedByReceipt" | "needsReconciliation" | "needsHuman" | "retrySameKey" | "cancelled",
  ): Locator {
    return this.plan.locator(`[data-group="${group}"]`);
  }

  /** Stops the live poll, so the page keeps showing the version it rendered (to race a change on purpose). */
  async pauseLiveUpdates(): Promise<void> {
    await this.page.route("**/api/console/**", (route) => route.abort());
  }
}
