import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isSealed } from "@/lib/core/envelope-encryption";
import { getEnv } from "@/lib/config/env";
import type { AgentScopes } from "@/lib/model/agent-scopes";
import type { Principal } from "@/lib/model/permissions";
import { issueApiToken } from "@/lib/stores/api-tokens";
import { destroyDataKeys } from "@/lib/stores/data-keys";
import { loadTaskDetail } from "@/lib/adapters/console/tasks/task-detail";
import * as tasksRoute from "@/app/api/v1/tasks/route";
import * as taskRoute from "@/app/api/v1/tasks/[id]/route";
import * as transitionsRoute from "@/app/api/v1/tasks/[id]/transitions/route";
import { openTestPglite, type TestDatabase } from "@/tests/helpers/pglite";
import { problemTypeOf } from "@/lib/adapters/http/problem";
import { callRoute as call, serveRoutesFrom } from "@/tests/helpers/route-call";
import { filesHolding, tablesHolding } from "@/tests/helpers/at-rest-search";

/**
 * The task state at rest (docs/encryption.md), on a database in a folder as
 * `npm start` keeps it, through the real route handlers: a subtask's title
 * and an implementation plan (free text, confidential by default) are
 * sealed leaf by leaf in tasks.state, transitions.state_after and
 * transitions.patch, with nothing of them in any table or any file of the
 * folder; the API and the console read them back; a value a transition
 * does not change keeps its sealed bytes; with encryption off the same
 * search finds them; once the keys are destroyed they read "unreadable"
 * and the engine refuses to build on them.
 */

const folder = mkdtempSync(path.join(tmpdir(), "verity-task-state-"));
// Read once by lib/config/env.ts, at the first use (after this line).
process.env.VERITY_KEYRING_FILE = path.join(folder, "keys", "keyring.json");

let t: TestDatabase;
let token: string;
const system = { identity: "system:test", kind: "system" } as const;
const operator: Principal = {
  kind: "user",
  id: "operator",
  identity: "spiffe://verity.local/user/operator",
  role: "operator",
  displayName: "Operator",
  tenantId: "default",
};
const scopes: AgentScopes = { workflows: "*", tools: "*", take_over_leases: false };

beforeAll(async () => {
  t = await openTestPglite({ dataDir: path.join(folder, "pglite") });
  serveRoutesFrom(t);
  token = (
    await issueApiToken(
      t.db,
      { name: "state-bot", identity: "spiffe://verity.local/agent/state-bot", role: "agent", scopes },
      system,
    )
  ).token;
});
afterAll(async () => {
  serveRoutesFrom(undefined);
  await t?.close();
  rmSync(folder, { recursive: true, force: true });
});

interface Written {
  taskId: string;
  version: number;
  title: string;
  plan: string;
}

/** A task moved to RUNNING whose last transition adds a subtask and an implementation plan in known words. */
async function taskHoldingFreeText(): Promise<Written> {
  const nonce = randomBytes(6).toString("hex");
  const title = `Call Dorothy Vaughan back ${nonce}`;
  const plan = `Refund plan for Mary Jackson ${nonce}: card ending 4242`;
  const created = await call(tasksRoute.POST, "POST", "/api/v1/tasks", {
    token,
    body: { workflow: "agent-task", intent_id: `state-${nonce}` },
  });
  expect(created.status).toBe(201);
  const taskId = created.body.id as string;
  let version = created.body.version as number;
  for (const to of ["PLANNING", "READY", "RUNNING"]) {
    const moved = await transition(taskId, { to, expected_version: version });
    version = (moved.task as { version: number }).version;
  }
  const patched = await transition(taskId, {
    expected_version: version,
    patch: { subtasks: [{ id: "call-back", title, mandatory: false }], artifacts: { implementation_plan: plan } },
  });
  return { taskId, version: (patched.task as { version: number }).version, title, plan };
}

async function transition(taskId: string, body: Record<string, unknown>): Promise<Record<string, unknown>> {
  const moved = await call(transitionsRoute.POST, "POST", `/api/v1/tasks/${taskId}/transitions`, {
    token,
    params: { id: taskId },
    body,
  });
  expect(moved.status, JSON.stringify(moved.body)).toBe(200);
  return moved.body;
}

type StoredState = {
  status: string;
  subtasks: Array<{ id: string; title: unknown; status: unknown }>;
  artifacts: Record<string, unknown>;
};

async function storedRows(taskId: string) {
  const [task] = await t.sql<{ state: StoredState }>("SELECT state FROM tasks WHERE id = $1", [taskId]);
  const log = await t.sql<{ to_version: number; patch: Record<string, unknown>; state_after: StoredState }>(
    "SELECT to_version, patch, state_after FROM transitions WHERE task_id = $1 ORDER BY to_version",
    [taskId],
  );
  return { state: task!.state, log };
}

describe("the task state at rest", () => {
  it("seals free text leaf by leaf, leaves no plaintext in any table or file, and reads back through the API and the console", async () => {
    const w = await taskHoldingFreeText();
    const { state, log } = await storedRows(w.taskId);
    // The shape and the internal fields stay in the clear; each confidential leaf is a sealed string.
    expect(state.status).toBe("RUNNING");
    expect(state.subtasks[0]).toMatchObject({ id: "call-back", status: "PENDING" });
    expect(isSealed(state.subtasks[0]!.title)).toBe(true);
    expect(isSealed(state.artifacts.implementation_plan)).toBe(true);
    // The last transition's state_after is the row's bytes; its patch is sealed under the transition.
    expect(log.at(-1)!.state_after).toEqual(state);
    const patch = log.at(-1)!.patch as {
      subtasks: Array<{ title: unknown }>;
      artifacts: { implementation_plan: unknown };
    };
    expect(isSealed(patch.subtasks[0]!.title)).toBe(true);
    expect(patch.subtasks[0]!.title).not.toBe(state.subtasks[0]!.title);

    expect(await tablesHolding(t.sql, [w.title, w.plan])).toEqual([]);
    await t.sql("CHECKPOINT");
    expect(filesHolding(path.join(folder, "pglite"), w.title)).toEqual([]);
    expect(filesHolding(path.join(folder, "pglite"), "Mary Jackson")).toEqual([]);

    const read = await call(taskRoute.GET, "GET", `/api/v1/tasks/${w.taskId}`, { token, params: { id: w.taskId } });
    expect(read.status).toBe(200);
    const readState = read.body.state as StoredState;
    expect(readState.subtasks[0]!.title).toBe(w.title);
    expect(readState.artifacts.implementation_plan).toBe(w.plan);
    const history = await call(transitionsRoute.GET, "GET", `/api/v1/tasks/${w.taskId}/transitions`, {
      token,
      params: { id: w.taskId },
    });
    expect(JSON.stringify(history.body)).toContain(w.title);
    expect(JSON.stringify(history.body)).toContain(w.plan);

    const detail = await loadTaskDetail(t.db, w.taskId, operator);
    expect(detail?.task.state.subtasks[0]?.title).toBe(w.title);
    expect(detail?.transitions[0]?.patch.artifacts?.implementation_plan).toBe(w.plan);
  });

  it("keeps the sealed bytes of a value a transition does not change, and seals a changed one anew", async () => {
    const w = await taskHoldingFreeText();
    const before = (await storedRows(w.taskId)).state;
    await transition(w.taskId, {
      expected_version: w.version,
      patch: { subtasks: [{ id: "call-back", status: "ACTIVE" }], gates: { implementation_complete: true } },
    });
    const after = await storedRows(w.taskId);
    expect(after.state.subtasks[0]!.title).toBe(before.subtasks[0]!.title);
    expect(after.state.artifacts.implementation_plan).toBe(before.artifacts.implementation_plan);
    expect(after.state.subtasks[0]!.status).toBe("ACTIVE");
    // Every version that holds the title holds the same bytes.
    const titles = new Set(after.log.flatMap((l) => l.state_after.subtasks.map((s) => s.title)));
    expect(titles.size).toBe(1);

    await transition(w.taskId, {
      expected_version: w.version + 1,
      patch: { artifacts: { implementation_plan: `${w.plan}, revised` } },
    });
    const revised = (await storedRows(w.taskId)).state;
    expect(isSealed(revised.artifacts.implementation_plan)).toBe(true);
    expect(revised.artifacts.implementation_plan).not.toBe(before.artifacts.implementation_plan);
    expect(revised.subtasks[0]!.title).toBe(before.subtasks[0]!.title);
    const read = await call(taskRoute.GET, "GET", `/api/v1/tasks/${w.taskId}`, { token, params: { id: w.taskId } });
    expect((read.body.state as StoredState).artifacts.implementation_plan).toBe(`${w.plan}, revised`);
  });

  it("with VERITY_ENCRYPTION_AT_REST=off, the same search finds the words: the search can fail", async () => {
    const env = getEnv();
    env.VERITY_ENCRYPTION_AT_REST = "off";
    let w: Written;
    try {
      w = await taskHoldingFreeText();
    } finally {
      env.VERITY_ENCRYPTION_AT_REST = "on";
    }
    const found = await tablesHolding(t.sql, [w.title, w.plan]);
    expect(found).toEqual(
      expect.arrayContaining([`tasks holds ${w.title}`, `transitions holds ${w.title}`, `transitions holds ${w.plan}`]),
    );
    await t.sql("CHECKPOINT");
    expect(filesHolding(path.join(folder, "pglite"), w.title)).not.toEqual([]);
  });

  it("once the keys are destroyed, reads say the values are unreadable and the engine refuses to build on them", async () => {
    const w = await taskHoldingFreeText();
    await destroyDataKeys(t.db, "default", system);
    const unreadable = expect.stringContaining("[sealed value, unreadable: ");
    const read = await call(taskRoute.GET, "GET", `/api/v1/tasks/${w.taskId}`, { token, params: { id: w.taskId } });
    expect(read.status).toBe(200);
    const state = read.body.state as StoredState;
    expect(state.subtasks[0]!.title).toEqual(unreadable);
    expect(state.artifacts.implementation_plan).toEqual(unreadable);
    expect(state.status).toBe("RUNNING");
    const detail = await loadTaskDetail(t.db, w.taskId, operator);
    expect(detail?.task.state.subtasks[0]?.title).toEqual(unreadable);
    expect(detail?.transitions[0]?.patch.subtasks?.[0]?.title).toEqual(unreadable);

    // A transition needs the plaintext it keeps: key_unavailable, nothing written, never a guess.
    const refused = await call(transitionsRoute.POST, "POST", `/api/v1/tasks/${w.taskId}/transitions`, {
      token,
      params: { id: w.taskId },
      body: { expected_version: w.version, patch: { gates: { implementation_complete: true } } },
    });
    expect(refused.status).toBe(503);
    expect(refused.body.type).toBe(problemTypeOf("key_unavailable"));
    const [row] = await t.sql<{ version: number }>("SELECT version FROM tasks WHERE id = $1", [w.taskId]);
    expect(row!.version).toBe(w.version);
  });
});
