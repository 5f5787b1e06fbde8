import { describe, expect, it } from "vitest";
import { startBackgroundLoop } from "@/lib/jobs/background";
import { performEffect } from "@/lib/connectors/effects";
import { recordOutcome } from "@/lib/use-cases/executions/record-outcome";
import { lineLogger } from "@/lib/config/log";
import { agent, connectorsFor, refundExecution } from "@/tests/helpers/effects";
import { useTestDatabase } from "@/tests/helpers/use-test-database";
import { sandbox } from "@/tests/sandbox/helpers";

/**
 * Quiet by default: the background loop says what changed at info and what
 * it looked at only at debug, and the sandbox logs its requests at debug. An
 * idle console used to print a line per provider lookup (302 in 17 minutes).
 */
const db = useTestDatabase();

function collect() {
  const lines: string[] = [];
  return {
    lines,
    logger: lineLogger((l) => lines.push(l), { level: "debug" }),
    atInfo: () => lines.filter((l) => !l.startsWith("debug: ")),
  };
}

describe("background loop and sandbox logs", () => {
  it("a tick that settles an execution and delivers its message says so at info; an idle tick only at debug", async () => {
    const provider = collect();
    const s = await sandbox({ logger: provider.logger });
    const execution = await refundExecution(db);
    await performEffect(execution, connectorsFor(s.url, { faults: ["error_after_commit"] }));
    await recordOutcome(db, execution.id, { attempt_id: execution.attemptId, outcome: "unknown", error: "500" }, agent);

    const loop = collect();
    // verifyEvery 1: every tick also asks the provider about each settled execution, as an idle server does once a minute.
    const background = startBackgroundLoop(db, connectorsFor(s.url), 3_600_000, {
      deliver: async () => undefined,
      verifyEvery: 1,
      logger: loop.logger,
    });
    try {
      await background.runOnce();
      expect(loop.atInfo()).toEqual([
        `reconciled 1 execution(s): 1 reconciled_succeeded executions=["${execution.id}"]`,
        expect.stringMatching(/^delivered \d+ outbox message\(s\)$/),
      ]);
      expect(loop.lines.filter((l) => l.startsWith("debug: tick "))).toHaveLength(1);

      loop.lines.length = 0;
      provider.lines.length = 0;
      await background.runOnce();
      // The verifier looked the settled refund up at the provider again: nothing changed, so nothing at info.
      expect(loop.atInfo()).toEqual([]);
      expect(loop.lines).toEqual([
        expect.stringMatching(
          /^debug: tick reconcile_examined=0 reconcile_not_due=0 verify_checked=1 .*outbox_claimed=0 errors=0$/,
        ),
      ]);
      await s.close();
      expect(provider.atInfo()).toEqual([]);
      expect(provider.lines).toEqual([
        expect.stringMatching(/^debug: GET \/v1\/refunds\?idempotency_key=\S+ → 200 \d+ ms$/),
      ]);
    } finally {
      await background.stop();
    }
  });

  it("the sandbox logs each request at debug, so at info its log stays empty", async () => {
    const seen = async (level: "debug" | "info") => {
      const lines: string[] = [];
      const s = await sandbox({ logger: lineLogger((l) => lines.push(l), { level }) });
      const res = await fetch(`${s.url}/v1/refunds?idempotency_key=k`);
      expect(res.status).toBe(200);
      await res.arrayBuffer();
      // A request's line is written when its response closes; close() returns after every connection has.
      await s.close();
      return lines;
    };
    expect(await seen("debug")).toEqual([
      expect.stringMatching(/^debug: GET \/v1\/refunds\?idempotency_key=k → 200 \d+ ms$/),
    ]);
    expect(await seen("info")).toEqual([]);
  });
});
