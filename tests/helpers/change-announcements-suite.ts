import { afterAll, beforeAll, expect, it } from "vitest";
import type { DatabaseHandle, Db } from "@/lib/db/client";
import { applyLiveUpdatesSetting, type ChangeListener } from "@/lib/db/notifications";
import { newId } from "@/lib/core/ids";
import type { Actor } from "@/lib/model/actor";
import { parseChangePayload, type ChangeEvent } from "@/lib/model/live/change-events";
import { compareAndSwap } from "@/lib/stores/tasks/task-store";
import { createTask } from "@/lib/use-cases/tasks/create-task";
import { getTask } from "@/lib/use-cases/tasks/task-queries";
import { transitionTask } from "@/lib/use-cases/tasks/transition-task";

const agent: Actor = { identity: "spiffe://verity.test/agent/announcer", kind: "agent" };

/**
 * The change announcements from the writing transaction (docs/live-updates.md),
 * on a database `open` gives: the embedded one (tests/db) or PostgreSQL
 * (tests/postgres). Announcements arrive in commit order on one listener, so
 * "B arrived and A did not before it" shows A was never announced, with no wait.
 */
export function describeChangeAnnouncements(
  open: () => Promise<Pick<DatabaseHandle, "db" | "platformDb" | "listenForChanges"> & { close(): Promise<void> }>,
) {
  let handle: Awaited<ReturnType<typeof open>>;
  let db: Db;
  let listener: ChangeListener;
  const received: ChangeEvent[] = [];
  const raw: string[] = [];
  /** The database's switch as the listener heard it: first when listening started, then each change. */
  const switches: boolean[] = [];
  let arrived: () => void = () => undefined;

  beforeAll(async () => {
    handle = await open();
    db = handle.db;
    let listening!: () => void;
    const ready = new Promise<void>((resolve) => (listening = resolve));
    listener = handle.listenForChanges({
      onPayload: (payload) => {
        raw.push(payload);
        const event = parseChangePayload(payload);
        if (event) received.push(event);
        arrived();
      },
      onListening: () => listening(),
      onSwitch: (on) => {
        switches.push(on);
        arrived();
      },
    });
    await ready;
  });
  afterAll(async () => {
    await listener?.close();
    await handle?.close();
  });

  async function switched(count: number): Promise<void> {
    while (switches.length < count) await new Promise<void>((resolve) => (arrived = resolve));
  }

  /** The first announcement matching, as soon as it has arrived. */
  async function announced(match: (e: ChangeEvent) => boolean): Promise<ChangeEvent> {
    for (;;) {
      const found = received.find(match);
      if (found) return found;
      await new Promise<void>((resolve) => (arrived = resolve));
    }
  }

  async function runningTask(): Promise<{ id: string; version: number }> {
    const { task } = await createTask(db, { workflow: "agent-task", intent_id: "announce" }, agent);
    let version = task.version;
    for (const to of ["PLANNING", "READY", "RUNNING"])
      version = (await transitionTask(db, task.id, { expected_version: version, to }, agent)).task.version;
    return { id: task.id, version };
  }

  it("a committed CAS announces its task's tenant, id and new version, and nothing of its data", async () => {
    const task = await runningTask();
    const result = await transitionTask(
      db,
      task.id,
      { expected_version: task.version, patch: { budget: { hops_used: 1 } } },
      agent,
    );
    const event = await announced((e) => e.kind === "task" && e.id === task.id && e.version === result.task.version);
    expect(event).toEqual({ tenantId: "default", kind: "task", id: task.id, version: result.task.version });
    // The payload names the row and nothing else: no status, no state, no actor.
    const payload = raw.find((p) => p.includes(task.id) && p.includes(`"v" : ${result.task.version}`));
    expect(Object.keys(JSON.parse(payload!) as object).sort()).toEqual(["id", "k", "t", "v"]);
  });

  it("a rolled-back CAS announces nothing, and the next committed one does", async () => {
    const rolledBack = await runningTask();
    const committed = await runningTask();
    const current = (await getTask(db, rolledBack.id))!;
    const now = new Date();
    const refused = new Error("rolled back on purpose");
    await expect(
      db.$transaction(async (tx) => {
        const swapped = await compareAndSwap(tx, {
          id: newId("tr"),
          taskId: current.id,
          fromVersion: current.version,
          toVersion: current.version + 1,
          fromStatus: current.status,
          toStatus: current.status,
          actor: agent,
          reason: null,
          patch: {},
          stateAfter: {
            ...current.state,
            version: current.version + 1,
            updated_at: now.toISOString(),
            updated_by: agent.identity,
          },
          requestDigest: "rolled-back",
          createdAt: now,
        });
        // The write itself succeeded inside the transaction: only the rollback keeps it unannounced.
        expect(swapped).not.toBeNull();
        throw refused;
      }),
    ).rejects.toBe(refused);
    expect((await getTask(db, rolledBack.id))!.version).toBe(current.version);

    const result = await transitionTask(
      db,
      committed.id,
      { expected_version: committed.version, patch: { budget: { hops_used: 1 } } },
      agent,
    );
    await announced((e) => e.id === committed.id && e.version === result.task.version);
    expect(received.filter((e) => e.id === rolledBack.id && e.version === current.version + 1)).toEqual([]);
  });

  it("with the database's switch off a committed CAS announces nothing, and on again it announces", async () => {
    // Listening started with the switch as a new database has it.
    expect(switches).toEqual([true]);
    const task = await runningTask();
    expect(await applyLiveUpdatesSetting(handle.platformDb, "off")).toEqual({ on: false, changed: true });
    await switched(2);
    expect(switches).toEqual([true, false]);
    const silent = await transitionTask(
      db,
      task.id,
      { expected_version: task.version, patch: { budget: { hops_used: 1 } } },
      agent,
    );
    // Asked again (another server's start with the same setting): nothing changes, nothing is announced.
    expect(await applyLiveUpdatesSetting(handle.platformDb, "off")).toEqual({ on: false, changed: false });
    expect(await applyLiveUpdatesSetting(handle.platformDb, undefined)).toEqual({ on: false, changed: false });
    expect(await applyLiveUpdatesSetting(handle.platformDb, "on")).toEqual({ on: true, changed: true });
    await switched(3);
    const heard = await transitionTask(
      db,
      task.id,
      { expected_version: silent.task.version, patch: { budget: { hops_used: 2 } } },
      agent,
    );
    await announced((e) => e.id === task.id && e.version === heard.task.version);
    // In commit order: had the CAS made while off been announced, it would have arrived before the switch's "on".
    expect(received.filter((e) => e.id === task.id && e.version === silent.task.version)).toEqual([]);
    expect(switches).toEqual([true, false, true]);
    // The switch's own announcements are not changes: never handed to onPayload.
    expect(raw.filter((p) => p.includes('"announcements"'))).toEqual([]);
  });

  it("a tenant's own connection may read the switch but not turn it", async () => {
    await expect(db.$executeRaw`UPDATE live_announcements SET enabled = false`).rejects.toThrow(/permission denied/);
    expect((await db.liveAnnouncements.findUniqueOrThrow({ where: { id: true } })).enabled).toBe(true);
  });
}
