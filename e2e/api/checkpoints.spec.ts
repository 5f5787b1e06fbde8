import { expect, test, type APIRequestContext, type APIResponse } from "@playwright/test";
import { userIdentity } from "@/lib/model/permissions";
import { integrityCheckNames } from "@/lib/model/checkpoints/checkpoint-schema";
import {
  AgentApi,
  authHeaders,
  demoAgent,
  expectProblem,
  fieldsOf,
  invariantsOf,
  uniqueId,
  type TaskBody,
} from "./agent-api";
import { signedInRequest } from "../pages/login-page";

/**
 * Checkpoints over HTTP. Agents use their bearer token; people use the
 * console session (the checkpoint routes accept it, since engineers have no
 * API tokens), signed in here through next-auth's credentials endpoint as
 * the browser would. Restores are for engineers only.
 */
test.use({ extraHTTPHeaders: authHeaders });

interface Integrity {
  ok: boolean;
  checks: Array<{ check: string; ok: boolean; message: string }>;
}
interface CheckpointBody {
  id: string;
  task_id: string;
  state_version: number;
  trigger: string;
  created_by: string;
  key_id: string;
  snapshot_status: string | null;
  integrity: Integrity;
}
interface PlanBody {
  allowed: boolean;
  kind: string;
  refusal: { code: string; message: string } | null;
  current: { version: number; status: string };
  effects: Record<string, unknown[]>;
  reauthorization: { budget: { committed_usd: number }; policy_version: { current: string } };
  lease: { active: boolean; action: string };
  resulting_state: { status: string; version: number } | null;
  diff: Array<{ path: string; kind: string }>;
}

class CheckpointApi extends AgentApi {
  constructor(request: APIRequestContext) {
    super(request);
  }

  list(taskId: string, as: APIRequestContext = this.request): Promise<APIResponse> {
    return as.get(`/api/v1/tasks/${encodeURIComponent(taskId)}/checkpoints`);
  }

  async checkpoints(taskId: string): Promise<CheckpointBody[]> {
    const res = await this.list(taskId);
    expect(res.status(), await res.text()).toBe(200);
    return ((await res.json()) as { items: CheckpointBody[] }).items;
  }

  create(
    taskId: string,
    body: Record<string, unknown> = {},
    headers: Record<string, string> = {},
    as: APIRequestContext = this.request,
  ): Promise<APIResponse> {
    return as.post(`/api/v1/tasks/${encodeURIComponent(taskId)}/checkpoints`, { data: body, headers });
  }

  plan(
    checkpointId: string,
    body: Record<string, unknown>,
    as: APIRequestContext = this.request,
  ): Promise<APIResponse> {
    return as.post(`/api/v1/checkpoints/${encodeURIComponent(checkpointId)}/restore-plan`, { data: body });
  }

  restore(
    checkpointId: string,
    body: Record<string, unknown>,
    as: APIRequestContext,
    headers: Record<string, string> = {},
  ): Promise<APIResponse> {
    return as.post(`/api/v1/checkpoints/${encodeURIComponent(checkpointId)}/restore`, { data: body, headers });
  }

  /** RUNNING at v4 with the plan gate opened (an automatic checkpoint), then moved on to FAILED at v6. */
  async movedOnTask(): Promise<{ task: TaskBody; checkpoint: CheckpointBody }> {
    let task = await this.createAgentTask();
    task = await this.drive(task, ["PLANNING", "READY", { to: "RUNNING", patch: { gates: { plan_approved: true } } }]);
    const [checkpoint] = await this.checkpoints(task.id);
    task = await this.drive(task, [{ patch: { budget: { tokens_spent: 900 } } }, "FAILED"]);
    return { task, checkpoint: checkpoint! };
  }
}

test("checkpoints are taken at boundaries and on demand, and each one verifies", async ({ request }) => {
  const api = new CheckpointApi(request);
  let task = await api.createAgentTask();
  task = await api.drive(task, [
    "PLANNING",
    "READY",
    { to: "RUNNING", patch: { gates: { plan_approved: true } } },
    { patch: { budget: { hops_used: 2 } } },
  ]);
  const automatic = await api.checkpoints(task.id);
  expect(automatic.map((c) => [c.trigger, c.state_version, c.snapshot_status, c.created_by])).toEqual([
    ["gate_opened", 4, "RUNNING", demoAgent.identity],
  ]);
  expect(automatic[0]?.integrity.ok).toBe(true);
  expect(automatic[0]?.integrity.checks.map((c) => c.check)).toEqual([...integrityCheckNames]);

  const id = uniqueId("ckpt");
  const created = await api.create(task.id, { checkpoint_id: id }, { "If-Match": `"${task.version}"` });
  expect(created.status(), await created.text()).toBe(201);
  expect(created.headers()["location"]).toBe(`/api/v1/checkpoints/${id}`);
  expect(await created.json()).toMatchObject({ id, trigger: "on_demand", state_version: 5, integrity: { ok: true } });
  const again = await api.create(task.id, { checkpoint_id: id }, { "If-Match": `"${task.version}"` });
  expect(again.status()).toBe(200);
  expect(again.headers()["idempotent-replayed"]).toBe("true");
  const stale = await expectProblem(await api.create(task.id, {}, { "If-Match": '"2"' }), 409, "version-conflict");
  expect(stale.current_version).toBe(5);
  expect(fieldsOf(await expectProblem(await api.create(task.id, { snapshot: {} }), 400, "validation-failed"))).toEqual([
    "snapshot",
  ]);

  const detail = await request.get(`/api/v1/checkpoints/${id}`);
  expect(detail.status()).toBe(200);
  const body = (await detail.json()) as {
    document: {
      schema_version: string;
      state_snapshot: { status: string };
      integrity: { signature: string };
      provenance: { policy_version: string };
    };
    diff_to_current: unknown[];
  };
  expect(body.document.schema_version).toBe("oaies.checkpoint.v2");
  expect(body.document.state_snapshot.status).toBe("RUNNING");
  expect(body.document.integrity.signature).toMatch(/^[0-9a-f]{64}$/);
  expect(body.document.provenance.policy_version).toMatch(/^policy:[0-9a-f]{16}$/);
  expect(body.diff_to_current).toEqual([]);
  await expectProblem(await request.get("/api/v1/checkpoints/ckpt_missing"), 404, "not-found");
});

test("an engineer plans and restores; a stale restore is refused with its reason; every attempt is recorded", async ({
  request,
  playwright,
  baseURL,
}) => {
  const api = new CheckpointApi(request);
  const { task, checkpoint } = await api.movedOnTask();
  const engineer = await signedInRequest(playwright, baseURL, "engineer");
  try {
    const stalePlan = (await (await api.plan(checkpoint.id, {}, engineer)).json()) as PlanBody;
    expect(stalePlan).toMatchObject({
      allowed: false,
      kind: "rewind",
      refusal: { code: "stale" },
      current: { version: 6, status: "FAILED" },
    });
    const plan = (await (await api.plan(checkpoint.id, { rewind: true }, engineer)).json()) as PlanBody;
    expect(plan).toMatchObject({ allowed: true, refusal: null, resulting_state: { status: "RUNNING", version: 7 } });
    expect(plan.diff.map((d) => d.path)).toEqual(expect.arrayContaining(["status", "version"]));
    expect(Object.keys(plan.effects).sort()).toEqual([
      "cancelled",
      "needs_human",
      "needs_reconciliation",
      "retry_same_key",
      "skipped_by_receipt",
    ]);

    const refused = await expectProblem(
      await api.restore(checkpoint.id, { expected_version: 6, reason: "flaky CRM" }, engineer),
      422,
      "invariant-violated",
    );
    expect(invariantsOf(refused)).toEqual(["stale"]);
    expect(refused.detail).toContain("older than the committed version 6");
    const conflict = await expectProblem(
      await api.restore(checkpoint.id, { rewind: true, reason: "flaky CRM" }, engineer, { "If-Match": '"5"' }),
      409,
      "version-conflict",
    );
    expect(conflict.current_version).toBe(6);
    expect(
      fieldsOf(
        await expectProblem(
          await api.restore(checkpoint.id, { expected_version: 6, rewind: true }, engineer),
          400,
          "validation-failed",
        ),
      ),
    ).toEqual(["reason"]);

    const restoreId = uniqueId("rst");
    const res = await api.restore(
      checkpoint.id,
      { rewind: true, reason: "flaky CRM", restore_id: restoreId },
      engineer,
      { "If-Match": '"6"' },
    );
    expect(res.status(), await res.text()).toBe(200);
    expect(res.headers()["etag"]).toBe('"7"');
    const result = (await res.json()) as {
      task: TaskBody;
      transition: { to_version: number; actor: string; actor_kind: string; reason: string };
      restore: { id: string; outcome: string };
      replayed: boolean;
    };
    expect(result.task).toMatchObject({ version: 7, status: "RUNNING" });
    expect(result.transition).toMatchObject({ to_version: 7, actor: userIdentity("engineer"), actor_kind: "user" });
    expect(result.transition.reason).toBe(`restored from checkpoint ${checkpoint.id} (version 4): flaky CRM`);
    expect(result.restore).toMatchObject({ id: restoreId, outcome: "applied" });
    const replay = await api.restore(
      checkpoint.id,
      { rewind: true, reason: "flaky CRM", restore_id: restoreId },
      engineer,
      { "If-Match": '"6"' },
    );
    expect(replay.status()).toBe(200);
    expect(replay.headers()["idempotent-replayed"]).toBe("true");

    // History is appended, never rewritten.
    const log = await api.transitions(task.id);
    expect(log.map((t) => t.to_version)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(log.map((t) => t.to_status).slice(-2)).toEqual(["FAILED", "RUNNING"]);
    expect((await api.task(task.id)).state.gates.plan_approved).toBe(true);

    const restores = (await (await request.get(`/api/v1/tasks/${task.id}/checkpoints/restores`)).json()) as {
      items: Array<{ outcome: string; refusal: string | null }>;
    };
    expect(restores.items.map((r) => [r.outcome, r.refusal])).toEqual([
      ["applied", null],
      ["refused", "version_conflict"],
      ["refused", "stale"],
    ]);
  } finally {
    await engineer.dispose();
  }
});

test("operators, auditors and agents cannot restore; everyone may read and plan", async ({
  request,
  playwright,
  baseURL,
}) => {
  const api = new CheckpointApi(request);
  const { task, checkpoint } = await api.movedOnTask();
  const body = { expected_version: task.version, rewind: true, reason: "not mine to do" };
  const denied = await expectProblem(await api.restore(checkpoint.id, body, request), 403, "forbidden");
  expect(denied.detail).toContain("checkpoints:restore");
  for (const user of ["operator", "auditor", "admin"] as const) {
    const person = await signedInRequest(playwright, baseURL, user);
    try {
      expect((await api.list(task.id, person)).status()).toBe(200);
      expect((await api.plan(checkpoint.id, { rewind: true }, person)).status()).toBe(200);
      const problem = await expectProblem(await api.restore(checkpoint.id, body, person), 403, "forbidden");
      expect(problem.detail).toBe(`The ${user} role does not have the checkpoints:restore permission.`);
    } finally {
      await person.dispose();
    }
  }
  const auditor = await signedInRequest(playwright, baseURL, "auditor");
  try {
    await expectProblem(await api.create(task.id, {}, {}, auditor), 403, "forbidden");
  } finally {
    await auditor.dispose();
  }
  await api.expectUnchanged(task);
  const restores = (await (await request.get(`/api/v1/tasks/${task.id}/checkpoints/restores`)).json()) as {
    items: unknown[];
  };
  expect(restores.items).toEqual([]);
});

test("a session write from another origin is refused, and no credentials is a 401", async ({
  request,
  playwright,
  baseURL,
}) => {
  const api = new CheckpointApi(request);
  const { task, checkpoint } = await api.movedOnTask();
  const engineer = await signedInRequest(playwright, baseURL, "engineer");
  const anonymous = await playwright.request.newContext({ baseURL, extraHTTPHeaders: {} });
  try {
    const body = { expected_version: task.version, rewind: true, reason: "cross-site" };
    const problem = await expectProblem(
      await api.restore(checkpoint.id, body, engineer, { Origin: "https://evil.example" }),
      403,
      "forbidden",
    );
    expect(problem.detail).toContain("own origin");
    await expectProblem(await api.list(task.id, anonymous), 401, "unauthenticated");
    await expectProblem(await api.restore(checkpoint.id, body, anonymous), 401, "unauthenticated");
  } finally {
    await engineer.dispose();
    await anonymous.dispose();
  }
  await api.expectUnchanged(task);
});

test("the OpenAPI document describes the checkpoint endpoints", async ({ request }) => {
  const doc = (await (await request.get("/api/v1/openapi.json")).json()) as {
    paths: Record<string, Record<string, { operationId: string }>>;
  };
  expect(doc.paths["/api/v1/tasks/{id}/checkpoints"]?.post?.operationId).toBe("createCheckpoint");
  expect(doc.paths["/api/v1/checkpoints/{id}/restore-plan"]?.post?.operationId).toBe("planRestore");
  expect(doc.paths["/api/v1/checkpoints/{id}/restore"]?.post?.operationId).toBe("restoreCheckpoint");
});
