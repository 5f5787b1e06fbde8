/**
 * The task list at 100,000 tasks: keyset pages stay as cheap deep in the list
 * as on page 1, next to OFFSET paging of the same query in the same run.
 *
 *   npm run bench:task-list                 # TEST_DATABASE_URL or local PostgreSQL
 *   BENCH_TASKS=200000 npm run bench:task-list
 *
 * A few tasks are made through the engine (createTask and real transitions,
 * one per status and workflow used); the 100,000 are SQL copies of them with
 * their own ids and update times, so that every listed row is a valid task
 * the console parses. This measures reads; how tasks are written is
 * bench:transitions.
 */
import os from "node:os";
import { listTasks, type ListTasksQuery } from "@/lib/use-cases/tasks/list-tasks";
import { transitionTask } from "@/lib/use-cases/tasks/transition-task";
import { createTask } from "@/lib/use-cases/tasks/create-task";
import type { Actor } from "@/lib/model/actor";
import { createPostgresTestDatabase } from "@/tests/helpers/postgres";

Object.assign(process.env, { NODE_ENV: process.env.NODE_ENV ?? "production" });

const total = Number(process.env.BENCH_TASKS ?? 100_000);
const pageSize = 50;
const deepPage = Number(process.env.BENCH_DEEP_PAGE ?? 1000);
const repeats = 15;
const agent: Actor = { identity: "spiffe://verity.bench/agent/lister", kind: "agent" };

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

async function timed(times: number, op: () => Promise<unknown>): Promise<number> {
  // Warm-up: plans cached, pages in shared buffers, code compiled.
  for (let i = 0; i < 3; i++) await op();
  const samples: number[] = [];
  for (let i = 0; i < times; i++) {
    const t0 = performance.now();
    await op();
    samples.push(performance.now() - t0);
  }
  return median(samples);
}

async function main() {
  const target = await createPostgresTestDatabase({ poolSize: 2 });
  try {
    const db = target.db;
    console.log(`# bench:task-list  ${new Date().toISOString()}`);
    console.log(
      `# ${os.cpus().length} × ${os.cpus()[0]?.model ?? "cpu"}, Node ${process.version}, ${total.toLocaleString("en")} tasks, ${pageSize} per page`,
    );
    console.log(
      `# load average at start: ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(" ")}\n`,
    );

    // Templates through the engine: agent-task in four statuses, delivery in two.
    const templates: string[] = [];
    for (const path of [
      [],
      ["PLANNING"],
      ["PLANNING", "READY", "RUNNING"],
      ["PLANNING", "READY", "RUNNING", "WAITING_FOR_TOOL"],
    ]) {
      const { task } = await createTask(db, { workflow: "agent-task", intent_id: "bench" }, agent);
      let version = 1;
      for (const to of path)
        version = (await transitionTask(db, task.id, { expected_version: version, to }, agent)).task.version;
      templates.push(task.id);
    }
    for (let i = 0; i < 2; i++)
      templates.push((await createTask(db, { workflow: "delivery", intent_id: "bench" }, agent)).task.id);

    const t0 = performance.now();
    // Copies with their own id (also inside the state document) and update times a second apart.
    await db.$executeRawUnsafe(`
      INSERT INTO tasks (id, workflow_name, workflow_version, workflow_digest, status, version, state, intent_id, created_at, created_by, updated_at, updated_by)
      SELECT 'task_bench_' || lpad(g::text, 7, '0'), t.workflow_name, t.workflow_version, t.workflow_digest, t.status, t.version,
             jsonb_set(t.state, '{task_id}', to_jsonb('task_bench_' || lpad(g::text, 7, '0'))), t.intent_id,
             now() - make_interval(secs => g), t.created_by, now() - make_interval(secs => g), t.updated_by
        FROM generate_series(1, ${total}) g
        JOIN (SELECT *, row_number() OVER (ORDER BY id) - 1 AS k FROM tasks) t ON t.k = g % ${templates.length}`);
    await db.$executeRawUnsafe("ANALYZE tasks");
    console.log(`# loaded ${total.toLocaleString("en")} tasks in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);

    const filters: Array<{ name: string; query: ListTasksQuery }> = [
      { name: "all tasks", query: {} },
      { name: "status = RUNNING", query: { status: "RUNNING" } },
      { name: "workflow = delivery", query: { workflow: "delivery" } },
      { name: "id starts with task_bench_00", query: { q: "task_bench_00" } },
    ];
    console.log(
      `| filter | rows matching | page 1 ms | keyset page ${deepPage} ms | keyset deep / first | OFFSET page ${deepPage} ms | OFFSET deep / first |`,
    );
    console.log("|---|---:|---:|---:|---:|---:|---:|");
    // Process warm-up (module code compiled, connections open) before anything is timed.
    for (let i = 0; i < 30; i++) await listTasks(db, { limit: pageSize });
    for (const { name, query } of filters) {
      const first = await timed(repeats, () => listTasks(db, { ...query, limit: pageSize }));
      // Walk the cursors down to the deep page (or the last one) once, then time that page.
      let cursor: string | null = null;
      let page = 1;
      let matching = 0;
      for (; page < deepPage; page++) {
        const result: Awaited<ReturnType<typeof listTasks>> = await listTasks(db, {
          ...query,
          limit: pageSize,
          ...(cursor ? { cursor } : {}),
        });
        matching += result.items.length;
        if (!result.nextCursor) break;
        cursor = result.nextCursor;
      }
      const reached = page;
      const deepCursor = cursor;
      const deep = await timed(repeats, () =>
        listTasks(db, { ...query, limit: pageSize, ...(deepCursor ? { cursor: deepCursor } : {}) }),
      );
      const where = {
        ...(query.status ? { status: query.status } : {}),
        ...(query.workflow ? { workflowName: query.workflow } : {}),
        ...(query.q ? { id: { startsWith: query.q } } : {}),
      };
      const offsetOf = (n: number) => () =>
        db.task.findMany({
          where,
          orderBy: [{ updatedAt: "desc" }, { id: "desc" }],
          skip: (n - 1) * pageSize,
          take: pageSize + 1,
        });
      const offsetFirst = await timed(repeats, offsetOf(1));
      const offsetDeep = await timed(repeats, offsetOf(reached));
      const matchingText =
        reached < deepPage ? `${matching.toLocaleString("en")}` : `≥ ${matching.toLocaleString("en")}`;
      console.log(
        `| ${name} | ${matchingText} | ${first.toFixed(2)} | ${deep.toFixed(2)} (page ${reached}) | ${(deep / first).toFixed(2)}× | ${offsetDeep.toFixed(2)} | ${(offsetDeep / offsetFirst).toFixed(2)}× |`,
      );
    }
    console.log(
      `\n# load average at end: ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(" ")}`,
    );
  } finally {
    await target.drop();
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
