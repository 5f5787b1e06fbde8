import { describe, expect, it } from "vitest";
import { FaultSyntaxError, GlobalFaults, noFaults, parseFault, planFromHeader } from "@/programs/sandbox/faults";
import { seededRandom } from "@/lib/core/seeded-random";

describe("fault parsing", () => {
  it("reads every fault", () => {
    expect(parseFault(" latency=250 ")).toEqual({ kind: "latency", ms: 250 });
    for (const name of [
      "error_before_commit",
      "error_after_commit",
      "timeout_after_commit",
      "drop_response",
      "duplicate_webhook",
    ]) {
      expect(parseFault(name)).toEqual({ kind: name });
    }
  });

  it.each([["latency"], ["latency=-1"], ["latency=60001"], ["Drop_Response"], ["crash"]])("refuses %s", (text) => {
    expect(() => parseFault(text)).toThrow(FaultSyntaxError);
  });

  it("plans a header: latencies add up, one outcome at most", () => {
    expect(planFromHeader("latency=10, duplicate_webhook,latency=5,drop_response")).toEqual({
      latencyMs: 15,
      outcome: "drop_response",
      duplicateWebhook: true,
    });
    expect(planFromHeader("")).toEqual(noFaults);
    expect(() => planFromHeader("error_after_commit,timeout_after_commit")).toThrow(/only one way/);
  });
});

describe("seeded faults", () => {
  it("the generator is a pure function of the seed", () => {
    const a = seededRandom(42);
    const b = seededRandom(42);
    const xs = Array.from({ length: 5 }, () => a());
    expect(Array.from({ length: 5 }, () => b())).toEqual(xs);
    expect(xs.every((x) => x >= 0 && x < 1)).toBe(true);
    expect(seededRandom(43)()).not.toBe(xs[0]);
  });

  it("draws the same plans after reconfiguring with the same seed", () => {
    const faults = new GlobalFaults();
    const config = { faults: ["error_before_commit", "drop_response", "latency=3"], probability: 0.5, seed: 7 };
    faults.configure(config);
    const first = Array.from({ length: 30 }, () => faults.draw(true));
    faults.configure(config);
    expect(Array.from({ length: 30 }, () => faults.draw(true))).toEqual(first);
    expect(new Set(first.map((p) => p.outcome))).toEqual(new Set([null, "error_before_commit", "drop_response"]));
    expect(first.filter((p) => p.outcome).every((p) => p.latencyMs === 3)).toBe(true);
    expect(faults.state()).toMatchObject({ draws: 30, hits: first.filter((p) => p.outcome).length });
  });

  it("does not draw for reads in the writes scope, nor with no faults", () => {
    const faults = new GlobalFaults();
    expect(faults.draw(true)).toBe(noFaults);
    faults.configure({ faults: ["drop_response"], seed: 1 });
    expect(faults.draw(false)).toBe(noFaults);
    expect(faults.state().draws).toBe(0);
    expect(faults.draw(true).outcome).toBe("drop_response");
  });
});
