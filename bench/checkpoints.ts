/**
 * Checkpoint create and verify throughput and latency for snapshots of about
 * 1 KB, 100 KB and 1 MB, next to a plain sha256 of the same snapshot bytes
 * in the same run.
 *
 *   npm run bench:checkpoints            # TEST_DATABASE_URL or local PostgreSQL
 *   BENCH_CHECKPOINT_SCALE=0.25 npm run bench:checkpoints
 *
 * Per size, one task whose state is that large (code_files filled with
 * 1,000-character paths), then, alternating in rounds so that load from
 * other jobs falls on all alike:
 *   sha256        sha256 of the snapshot's canonical bytes: the floor
 *   seal          redact + validate + canonical JSON + sha256 + HMAC, in memory
 *   verify        every check of a stored checkpoint, in memory
 *   create (db)   createCheckpoint: read the task and its context under a
 *                 share lock, seal, insert — one transaction on PostgreSQL
 *   verify (db)   verifyCheckpoint: read the row and the task, verify
 * One connection; sequential operations (this measures the cost of one
 * checkpoint, not contention).
 */
import { createHash } from "node:crypto";
import os from "node:os";
import { canonicalCheckpointJson } from "@/lib/model/checkpoints/checkpoint-canonical";
import {
  sealCheckpoint,
  verifyStoredCheckpoint,
  type CheckpointFacts,
} from "@/lib/model/checkpoints/checkpoint-integrity";
import { verifyCheckpoint } from "@/lib/use-cases/checkpoints/verify-checkpoint";
import { createCheckpoint } from "@/lib/use-cases/checkpoints/create-checkpoint";
import { getTaskOrThrow } from "@/lib/use-cases/tasks/task-queries";
import { transitionTask } from "@/lib/use-cases/tasks/transition-task";
import { createTask } from "@/lib/use-cases/tasks/create-task";
import type { Actor } from "@/lib/model/actor";
import { createPostgresTestDatabase } from "@/tests/helpers/postgres";

// As `npm start` runs it (see bench/transitions.ts: Prisma records call sites outside production).
Object.assign(process.env, { NODE_ENV: process.env.NODE_ENV ?? "production" });

const scale = Number(process.env.BENCH_CHECKPOINT_SCALE ?? 1);
const sizes = [
  { label: "1 KB", bytes: 1_024, iterations: 1_500 },
  { label: "100 KB", bytes: 100 * 1_024, iterations: 300 },
  { label: "1 MB", bytes: 1_024 * 1_024, iterations: 40 },
];
const rounds = 4;
const agent: Actor = { identity: "spiffe://verity.bench/agent/worker", kind: "agent" };
const keyring = { activeKeyId: "bench", keys: { bench: "bench-secret-0123456789abcdef0123456789abcdef" } };

type OpName = "sha256" | "seal" | "verify" | "create (db)" | "verify (db)";
const opNames: OpName[] = ["sha256", "seal", "verify", "create (db)", "verify (db)"];

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? Number.NaN;
}

/** code_files of 1,000-character paths until the snapshot is about `bytes` long (the first entry is trimmed to land close). */
function codeFilesFor(bytes: number, baseBytes: number): string[] {
  const files: string[] = [];
  let size = baseBytes;
  while (size < bytes && files.length < 1000) {
    const length = Math.min(1000, Math.max(1, bytes - size - 3));
    files.push(`src/${"x".repeat(length - 7)}.ts`.slice(0, length));
    size += length + 3;
  }
  return files;
}

async function timed(samples: number[], op: () => unknown): Promise<void> {
  const t0 = performance.now();
  await op();
  samples.push(performance.now() - t0);
}

async function main() {
  const started = performance.now();
  const target = await createPostgresTestDatabase({ poolSize: 1 });
  const results: Array<{
    label: string;
    snapshotBytes: number;
    payloadBytes: number;
    samples: Record<OpName, number[]>;
  }> = [];
  try {
    console.log(`# bench:checkpoints  ${new Date().toISOString()}`);
    console.log(
      `# ${os.cpus().length} × ${os.cpus()[0]?.model ?? "cpu"}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}, database ${target.name}`,
    );
    console.log(
      `# load average at start: ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(" ")}\n`,
    );
    for (const size of sizes) {
      const iterations = Math.max(rounds, Math.round(size.iterations * scale));
      const empty = await createTask(
        target.db,
        { workflow: "agent-task", intent_id: "bench", budget: { currency_committed_usd: 5 } },
        agent,
      );
      const baseBytes = canonicalCheckpointJson(empty.task.state).length;
      const { task: created } = await createTask(
        target.db,
        {
          workflow: "agent-task",
          intent_id: "bench",
          budget: { currency_committed_usd: 5 },
          artifacts: { code_files: codeFilesFor(size.bytes, baseBytes) },
        },
        agent,
      );
      const running = await transitionTask(target.db, created.id, { expected_version: 1, to: "PLANNING" }, agent);
      const task = await getTaskOrThrow(target.db, running.task.id);
      const snapshotBytes = canonicalCheckpointJson(task.state);
      const facts: CheckpointFacts = {
        checkpointId: "ckpt_bench",
        trigger: "on_demand",
        createdAt: new Date(),
        createdBy: agent.identity,
        task: { id: task.id, workflowDigest: task.workflow.digest, intentId: task.intentId, createdBy: task.createdBy },
        state: task.state,
        inputDigest: `sha256:${"a".repeat(64)}`,
        lease: null,
        undeliveredMessageIds: [],
        receiptIds: [],
        lastMessageId: null,
        policyVersion: "policy:bench",
      };
      const sealed = sealCheckpoint(facts, keyring);
      const context = { task: { id: task.id, workflowDigest: task.workflow.digest } };
      if (!verifyStoredCheckpoint(sealed.row, keyring, context).report.ok)
        throw new Error("the sealed checkpoint does not verify");
      const { checkpoint } = await createCheckpoint(target.db, task.id, {}, agent, { keyring });
      const samples = Object.fromEntries(opNames.map((n) => [n, [] as number[]])) as Record<OpName, number[]>;
      const ops: Record<OpName, () => unknown> = {
        sha256: () => createHash("sha256").update(snapshotBytes).digest("hex"),
        seal: () => sealCheckpoint(facts, keyring),
        verify: () => verifyStoredCheckpoint(sealed.row, keyring, context),
        "create (db)": () => createCheckpoint(target.db, task.id, {}, agent, { keyring }),
        "verify (db)": () => verifyCheckpoint(target.db, checkpoint.id, { keyring }),
      };
      // Warm-up, then alternating rounds in a rotating order.
      for (const name of opNames) for (let i = 0; i < Math.min(20, iterations); i++) await ops[name]();
      const perRound = Math.ceil(iterations / rounds);
      for (let round = 0; round < rounds; round++) {
        const order = [...opNames.slice(round % opNames.length), ...opNames.slice(0, round % opNames.length)];
        for (const name of order) for (let i = 0; i < perRound; i++) await timed(samples[name], ops[name]);
      }
      results.push({
        label: size.label,
        snapshotBytes: Buffer.byteLength(snapshotBytes),
        payloadBytes: Buffer.byteLength(sealed.row.payload),
        samples,
      });
      console.log(
        `${size.label}: snapshot ${Buffer.byteLength(snapshotBytes)} bytes, stored payload ${Buffer.byteLength(sealed.row.payload)} bytes, ${perRound * rounds} per operation`,
      );
    }
  } finally {
    await target.drop();
  }

  console.log("\n| snapshot | operation | per second | p50 ms | p99 ms | p50 ÷ sha256 p50 |");
  console.log("|---|---|---:|---:|---:|---:|");
  for (const r of results) {
    const shaP50 = percentile(
      [...r.samples.sha256].sort((a, b) => a - b),
      50,
    );
    for (const name of opNames) {
      const list = r.samples[name];
      const sorted = [...list].sort((a, b) => a - b);
      const total = list.reduce((a, b) => a + b, 0) / 1000;
      const p50 = percentile(sorted, 50);
      console.log(
        `| ${r.label} (${(r.snapshotBytes / 1024).toFixed(0)} KiB) | ${name} | ${(list.length / total).toFixed(0)} | ${p50.toFixed(3)} | ${percentile(sorted, 99).toFixed(3)} | ${name === "sha256" ? "1" : `${(p50 / shaP50).toFixed(0)}×`} |`,
      );
    }
  }
  console.log(
    `\n# total ${((performance.now() - started) / 1000).toFixed(1)} s, load average at end: ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}`,
  );
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : error);
  process.exit(1);
});
