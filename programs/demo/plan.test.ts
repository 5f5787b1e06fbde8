import { describe, expect, it } from "vitest";
import { parseAgentConfig } from "@/programs/agent/config";
import { FaultChooser } from "@/programs/agent/order";
import {
  agentInvocationOf,
  DEMO_RUN_PREFIX,
  demoRunSpecs,
  deviationsFromPlan,
  findSeed,
  nextDemoStep,
  planDemoRuns,
  resumeInvocationOf,
  type DemoRunSpec,
} from "@/programs/demo/plan";
import { getEnv } from "@/lib/config/env";

const defaults = { token: "vrt_demo", identity: "spiffe://verity.local/agent/refund-bot" };
const runs = planDemoRuns();

describe("the demo plan", () => {
  it("gives each run a seed under which the agent's own fault chooser draws exactly the faults listed, call by call", () => {
    for (const run of runs) {
      run.tasks.forEach((task, i) => {
        const chooser = new FaultChooser(run.faults, run.faultRate, run.seed, run.taskIds[i]!);
        expect(
          task.calls.map(() => chooser.draw() ?? null),
          `${run.runId} task ${i + 1}`,
        ).toEqual(task.calls);
      });
    }
  });

  it("is the same plan every time", () => {
    expect(planDemoRuns()).toEqual(runs);
  });

  it("names tasks as the agent does, each once, all under the prefix one --resume --run-id continues", () => {
    const ids = runs.flatMap((r) => r.taskIds);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(new RegExp(`^refund-${DEMO_RUN_PREFIX}-[a-z]+-\\d+$`));
    expect(runs.find((r) => r.runId === "demo-lost")?.taskIds).toEqual(["refund-demo-lost-1", "refund-demo-lost-2"]);
    expect(resumeInvocationOf().args).toEqual(expect.arrayContaining(["--resume", "--run-id", DEMO_RUN_PREFIX]));
  });

  it("shows what the issue asks for: a four-eyes frozen refund, a worker killed after the call, lost answers, a refusal retried", () => {
    const threshold = getEnv().VERITY_FOUR_EYES_THRESHOLD_CENTS;
    expect(runs.some((r) => r.amountCents >= threshold && r.tasks.some((t) => t.ends === "WAITING_FOR_HUMAN"))).toBe(
      true,
    );
    expect(runs.some((r) => r.amountCents < threshold && r.tasks.some((t) => t.ends === "WAITING_FOR_HUMAN"))).toBe(
      true,
    );
    expect(runs.some((r) => r.killAt === "after_call" && r.tasks.every((t) => t.ends === "COMPLETED"))).toBe(true);
    expect(runs.some((r) => r.webhooksLost && r.tasks.some((t) => t.calls[0] === "drop_response"))).toBe(true);
    expect(
      runs.some((r) =>
        r.tasks.some((t) => t.calls[0] === "error_before_commit" && t.calls[1] === null && t.ends === "COMPLETED"),
      ),
    ).toBe(true);
  });

  it("is a command line the agent accepts and reads back as planned", () => {
    for (const run of runs) {
      const { args, env } = agentInvocationOf(run);
      const config = parseAgentConfig(args, env, defaults);
      if (config === "help") throw new Error("help");
      expect(config).toMatchObject({
        tasks: run.tasks.length,
        runId: run.runId,
        amountCents: run.amountCents,
        faults: run.faults,
      });
      // Without faults the chooser never draws: rate and seed are the agent's defaults and do not matter.
      if (run.faults.length) expect(config).toMatchObject({ faultRate: run.faultRate, seed: run.seed });
      expect(config.killAt).toEqual(run.killAt ? [run.killAt] : []);
      expect(config.webhookUrl !== undefined).toBe(run.webhooksLost === true);
    }
    const frozen = agentInvocationOf(runs.find((r) => r.runId === "demo-frozen")!);
    expect(frozen.args).toEqual(
      expect.arrayContaining(["--faults", "latency=30000+error_before_commit", "--fault-rate", "1"]),
    );
  });

  it("refuses a run outside the prefix, and says so when no seed draws what a run lists", () => {
    expect(() =>
      planDemoRuns([{ runId: "ord-1", shows: "x", amountCents: 100, tasks: [{ calls: [null], ends: "COMPLETED" }] }]),
    ).toThrow(/must start with "demo-"/);
    const impossible: DemoRunSpec = {
      runId: "demo-x",
      shows: "x",
      amountCents: 100,
      tasks: [{ calls: ["drop_response"], ends: "COMPLETED" }],
      faultRate: 0,
    };
    expect(() => findSeed(impossible, ["refund-demo-x-1"], ["drop_response"], 0, 1_000)).toThrow(/no seed below 1000/);
    expect(demoRunSpecs.length).toBe(runs.length);
  });
});

describe("the demo's progress", () => {
  it("resumes what an agent can continue, waits while the server reconciles, and stops when every task rests", () => {
    expect(
      nextDemoStep(
        new Map([
          ["a", "COMPLETED"],
          ["b", "WAITING_FOR_HUMAN"],
          ["c", "FAILED"],
        ]),
      ),
    ).toEqual({ kind: "done" });
    expect(
      nextDemoStep(
        new Map([
          ["a", "COMPLETED"],
          ["b", "VALIDATING"],
          ["c", "RECONCILING"],
        ]),
      ),
    ).toEqual({ kind: "resume", taskIds: ["b"] });
    expect(
      nextDemoStep(
        new Map([
          ["a", "RECONCILING"],
          ["b", "HUMAN_RESOLVED"],
        ]),
      ),
    ).toEqual({ kind: "wait", taskIds: ["a", "b"] });
    expect(nextDemoStep(new Map([["a", "missing"]]))).toEqual({ kind: "wait", taskIds: ["a"] });
  });

  it("names every task that did not end where the plan says", () => {
    const statuses = new Map<string, string>(
      runs.flatMap((r) => r.tasks.map((t, i) => [r.taskIds[i]!, t.ends] as const)),
    );
    expect(deviationsFromPlan(runs, statuses)).toEqual([]);
    statuses.set("refund-demo-killed-1", "RECONCILING");
    statuses.delete("refund-demo-ok-3");
    expect(deviationsFromPlan(runs, statuses)).toEqual([
      { taskId: "refund-demo-killed-1", planned: "COMPLETED", actual: "RECONCILING" },
      { taskId: "refund-demo-ok-3", planned: "COMPLETED", actual: "missing" },
    ]);
  });
});
