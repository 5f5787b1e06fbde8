import { describe, expect, it } from "vitest";
import { parseAgentConfig, UsageError } from "@/programs/agent/config";
import { FaultChooser, faultHeaderOf, intentIdOf, noteRequestOf, orderOf, orderOfIntent } from "@/programs/agent/order";

const defaults = { token: "vrt_default", identity: "spiffe://verity.local/agent/refund-bot" };

describe("the agent's command line", () => {
  it("has defaults that run against a local npm start", () => {
    const config = parseAgentConfig([], {}, defaults, 0);
    expect(config).toMatchObject({
      verityUrl: "http://localhost:3000",
      token: "vrt_default",
      tasks: 3,
      amountCents: 2500,
      faults: [],
      faultRate: 0.3,
      seed: 42,
      resume: false,
      runId: "ord-0",
      killAt: [],
    });
    expect(config).not.toHaveProperty("resumeRunId");
  });

  it("reads options and the environment", () => {
    const config = parseAgentConfig(
      [
        "--tasks",
        "5",
        "--faults",
        "drop_response, timeout_after_commit",
        "--fault-rate",
        "1",
        "--seed",
        "7",
        "--resume",
        "--run-id",
        "r1",
      ],
      { VERITY_URL: "http://verity:3000", VERITY_TOKEN: "vrt_x", VERITY_FAULT_KILL_AT: "after_call" },
      defaults,
    );
    expect(config).toMatchObject({
      verityUrl: "http://verity:3000",
      token: "vrt_x",
      tasks: 5,
      faults: ["drop_response", "timeout_after_commit"],
      faultRate: 1,
      seed: 7,
      resume: true,
      runId: "r1",
      resumeRunId: "r1",
      killAt: ["after_call"],
    });
  });

  it.each([[["--tasks", "0"]], [["--faults", "explode"]], [["--fault-rate", "2"]], [["--nope"]], [["positional"]]])(
    "refuses %j",
    (argv) => {
      expect(() => parseAgentConfig(argv, {}, defaults)).toThrow(UsageError);
    },
  );

  it("takes a+b as one fault of both, with the sandbox's rule of one outcome per request", () => {
    const config = parseAgentConfig(["--faults", "latency=30000+error_before_commit,drop_response"], {}, defaults);
    expect(config).toMatchObject({ faults: ["latency=30000+error_before_commit", "drop_response"] });
    expect(faultHeaderOf("latency=30000 + error_before_commit")).toBe("latency=30000,error_before_commit");
    expect(() => parseAgentConfig(["--faults", "drop_response+error_after_commit"], {}, defaults)).toThrow(
      /only one way/,
    );
    expect(() => parseAgentConfig(["--faults", "latency=10+"], {}, defaults)).toThrow(/an empty part/);
    expect(() => parseAgentConfig(["--faults", "latency=10+explode"], {}, defaults)).toThrow(/unknown fault "explode"/);
  });

  it("sends the run's refund webhooks where --webhook-url says, an http(s) URL", () => {
    expect(parseAgentConfig(["--webhook-url", "http://127.0.0.1:9/webhooks"], {}, defaults)).toMatchObject({
      webhookUrl: "http://127.0.0.1:9/webhooks",
    });
    expect(parseAgentConfig([], {}, defaults)).not.toHaveProperty("webhookUrl");
    expect(() => parseAgentConfig(["--webhook-url", "ftp://example.com/x"], {}, defaults)).toThrow(UsageError);
    expect(() => parseAgentConfig(["--webhook-url", "not a url"], {}, defaults)).toThrow(UsageError);
  });

  it("refuses an unknown fault point", () => {
    expect(() => parseAgentConfig([], { VERITY_FAULT_KILL_AT: "after_lunch" }, defaults)).toThrow(
      /unknown fault point "after_lunch"/,
    );
  });
});

describe("orders", () => {
  it("round-trip through the intent id, so a resumed agent rebuilds the exact request", () => {
    const order = orderOf("run-1", 1999, "usd");
    expect(orderOfIntent(intentIdOf(order))).toEqual(order);
    expect(noteRequestOf(order)).toEqual({ customer_id: "cus_run-1", text: "Refunded 19.99 USD for order run-1." });
    expect(orderOfIntent("refund-order-1004")).toBeNull();
  });

  it("draw the same faults for the same seed and task, whatever else runs", () => {
    const draws = (seed: number, task: string) => {
      const c = new FaultChooser(["a", "b"], 0.5, seed, task);
      return Array.from({ length: 20 }, () => c.draw() ?? "-").join("");
    };
    expect(draws(1, "t1")).toBe(draws(1, "t1"));
    expect(draws(1, "t1")).not.toBe(draws(1, "t2"));
    expect(new FaultChooser(["a"], 0, 1, "t").draw()).toBeUndefined();
    expect(new FaultChooser(["a"], 1, 1, "t").draw()).toBe("a");
  });
});
