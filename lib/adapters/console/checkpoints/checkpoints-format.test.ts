import { describe, expect, it } from "vitest";
import { checkpointTriggers, integrityCheckNames } from "@/lib/model/checkpoints/checkpoint-schema";
import { classifyEffects } from "@/lib/model/checkpoints/checkpoint-restore-rules";
import type { IntegrityCheckName } from "@/lib/model/checkpoints/checkpoint-schema";
import { restoreRefusalCodes, type RestorePlan } from "@/lib/model/checkpoints/restore-plan";
import type { IntegrityCheck, IntegrityReport } from "@/lib/model/checkpoints/checkpoint-reports";
import {
  budgetLines,
  checkpointHref,
  describeCheck,
  describeLease,
  describePolicy,
  describeRestoreAttempt,
  describeRestoreResult,
  effectGroups,
  formatDiffValue,
  integrityCheckInfo,
  integritySummary,
  integrityVerdict,
  planHeadline,
  refusalInfo,
  taskCheckpointsHref,
  triggerLabels,
} from "@/lib/adapters/console/checkpoints/checkpoints-format";

/** A report in the engine's shape: every check passes except the ones named, with these messages. */
function report(failed: Partial<Record<IntegrityCheckName, string>> = {}): IntegrityReport {
  const checks: IntegrityCheck[] = integrityCheckNames.map((check) => ({
    check,
    ok: !(check in failed),
    message: failed[check] ?? `${check} ok`,
  }));
  return { ok: checks.every((c) => c.ok), checks, storedSchemaVersion: "oaies.checkpoint.v2", upgradedFrom: [] };
}

const known = new Set(["local"]);

describe("integrityVerdict", () => {
  it("calls a checkpoint valid only when every check passed", () => {
    expect(integrityVerdict(report(), "local", known)).toEqual({ status: "valid", reason: "All 8 checks passed." });
  });

  it("calls damaged bytes corrupt and says which check failed and why", () => {
    const verdict = integrityVerdict(
      report({ snapshot_digest: "sha256 of the snapshot is sha256:ab…, the checkpoint says sha256:cd…" }),
      "local",
      known,
    );
    expect(verdict.status).toBe("corrupt");
    expect(verdict.reason).toBe(
      "Failed: snapshot digest (sha256 of the snapshot is sha256:ab…, the checkpoint says sha256:cd…).",
    );
  });

  it("a signature that does not match under a key this server has is corruption, not a missing key", () => {
    expect(
      integrityVerdict(
        report({ signature: 'HMAC-SHA256 with key "local" does not match the stored bytes' }),
        "local",
        known,
      ).status,
    ).toBe("corrupt");
  });

  it("a key this server does not hold, with everything else intact, is unverifiable", () => {
    const verdict = integrityVerdict(
      report({ signature: 'key "k0" is not in this server\'s keyring (known: local)' }),
      "k0",
      known,
    );
    expect(verdict.status).toBe("unverifiable");
    expect(verdict.reason).toMatch(/^Cannot be checked here: signature \(key "k0" is not in this server's keyring/);
  });

  it("an unknown workflow definition alone is unverifiable; with anything else failing it is corrupt", () => {
    expect(
      integrityVerdict(
        report({ workflow_compatible: "workflow definition sha256:12… is not known to this server" }),
        "local",
        known,
      ).status,
    ).toBe("unverifiable");
    expect(
      integrityVerdict(
        report({ workflow_compatible: "not checked", payload_parses: "the stored payload is not JSON" }),
        "local",
        known,
      ).status,
    ).toBe("corrupt");
    expect(
      integrityVerdict(
        report({ signature: "unknown key", columns_match: "column(s) state_version disagree" }),
        "k0",
        known,
      ).status,
    ).toBe("corrupt");
  });
});

describe("checks in words", () => {
  it("names every check the engine reports and gives its result", () => {
    expect(Object.keys(integrityCheckInfo).sort()).toEqual([...integrityCheckNames].sort());
    expect(describeCheck({ check: "signature", ok: true, message: 'HMAC-SHA256 with key "local" matches' })).toBe(
      'Signature: passed. HMAC-SHA256 with key "local" matches',
    );
    expect(describeCheck({ check: "snapshot_digest", ok: false, message: "sha256 of the snapshot is x" })).toBe(
      "Snapshot digest: FAILED. Sha256 of the snapshot is x",
    );
    expect(integritySummary(report())).toBe("All 8 checks passed");
    expect(integritySummary(report({ signature: "x", schema: "y" }))).toBe("2 of 8 checks failed");
  });

  it("has a label for every trigger and a title and next step for every refusal", () => {
    expect(Object.keys(triggerLabels).sort()).toEqual([...checkpointTriggers].sort());
    expect(Object.keys(refusalInfo).sort()).toEqual([...restoreRefusalCodes].sort());
    // Every group of effects the engine classifies has words here.
    expect([...effectGroups].sort()).toEqual(Object.keys(classifyEffects([], new Set())).sort());
  });
});

function plan(overrides: Partial<RestorePlan> = {}): RestorePlan {
  return {
    checkpointId: "ckpt_1",
    taskId: "t1",
    kind: "rewind",
    rewind: true,
    allowed: true,
    refusal: null,
    fallbackCheckpointId: null,
    fallbackMessage: null,
    integrity: report(),
    current: { version: 7, status: "RUNNING" },
    checkpoint: {
      stateVersion: 4,
      status: "RUNNING",
      trigger: "on_demand",
      createdAt: new Date("2026-11-30T10:00:00Z"),
    },
    effects: classifyEffects([], new Set()),
    reauthorization: {
      budget: {
        checkpoint: { currency_usd: 1.5, tokens: 1000, hops: 2 },
        current: { currency_usd: 2.25, tokens: 3000, hops: 5 },
        resulting: { currency_usd: 2.25, tokens: 3000, hops: 5 },
        committedUsd: 5,
      },
      workflow: {
        checkpointDigest: "sha256:a",
        currentDigest: "sha256:a",
        name: "agent-task",
        version: 1,
        compatible: true,
      },
      policyVersion: { checkpoint: "policy:aaaa", current: "policy:aaaa", changed: false },
      credentials: "Never stored in checkpoints.",
    },
    lease: { active: false, holder: null, fencingToken: null, expiresAt: null, action: "none" },
    resultingState: null,
    diff: [],
    ...overrides,
  };
}

describe("restore plans in words", () => {
  it("says what an allowed plan writes", () => {
    expect(planHeadline(plan())).toBe("Allowed: a rewind to the state of version 4, written as new version 8");
    expect(planHeadline(plan({ kind: "roll_forward", checkpoint: { ...plan().checkpoint, stateVersion: 9 } }))).toBe(
      "Allowed: a roll forward to the state of version 9, written as version 8",
    );
  });

  it("names the refusal", () => {
    expect(planHeadline(plan({ allowed: false, refusal: { code: "stale", message: "older" } }))).toBe(
      "Refused — Stale: older than the committed state",
    );
    expect(planHeadline(plan({ allowed: false, refusal: { code: "corrupt", message: "digest" } }))).toBe(
      "Refused — Corrupt checkpoint",
    );
  });

  it("keeps spend from going down and says so per line", () => {
    expect(budgetLines(plan().reauthorization.budget)).toEqual([
      { label: "Spent", checkpoint: "$1.50", current: "$2.25", resulting: "$2.25" },
      { label: "Tokens", checkpoint: "1,000", current: "3,000", resulting: "3,000" },
      { label: "Hops", checkpoint: "2", current: "5", resulting: "5" },
    ]);
  });

  it("says what happens to the lease and the policy", () => {
    expect(describeLease(plan().lease, true)).toMatch(/^No worker holds a live lease/);
    const held = {
      active: true,
      holder: "spiffe://verity.local/agent/refund-bot",
      fencingToken: "3",
      expiresAt: new Date("2026-11-30T10:01:00Z"),
      action: "fence" as const,
    };
    expect(describeLease(held, true)).toBe(
      "The lease of agent/refund-bot (fencing token 3, until 30 Nov 2026, 10:01:00 UTC) is fenced: it ends now and its token is raised, so the old holder's writes are refused. A worker acquires a new lease to continue from the restored version.",
    );
    expect(describeLease({ ...held, action: "none" }, false)).toBe(
      "agent/refund-bot (fencing token 3, until 30 Nov 2026, 10:01:00 UTC) keeps its lease: nothing is applied.",
    );
    expect(describePolicy({ checkpoint: "policy:aaaa", current: "policy:bbbb", changed: true })).toMatch(
      /^The policy changed since the checkpoint \(policy:aaaa then, policy:bbbb now\)/,
    );
    expect(describePolicy({ checkpoint: "policy:aaaa", current: "policy:aaaa", changed: false })).toBe(
      "Unchanged since the checkpoint (policy:aaaa); re-read all the same.",
    );
  });

  it("describes the result and each attempt", () => {
    expect(
      describeRestoreResult({ version: 8, status: "RUNNING", checkpointVersion: 4, rewind: true, replayed: false }),
    ).toBe(
      "Rewound to the state of version 4: the task is now at version 8 (RUNNING). Earlier versions stay in the history.",
    );
    expect(
      describeRestoreResult({ version: 8, status: "RUNNING", checkpointVersion: 4, rewind: true, replayed: true }),
    ).toMatch(/^Already applied/);
    expect(
      describeRestoreAttempt({ outcome: "applied", rewind: true, fromVersion: 7, toVersion: 8, refusal: null }),
    ).toBe("Rewind applied: version 7 → 8");
    expect(
      describeRestoreAttempt({ outcome: "refused", rewind: false, fromVersion: 7, toVersion: null, refusal: "stale" }),
    ).toBe("Refused at version 7: stale: older than the committed state");
  });
});

describe("small helpers", () => {
  it("shows diff values short and quoted", () => {
    expect(formatDiffValue(undefined)).toBe("—");
    expect(formatDiffValue("RUNNING")).toBe("“RUNNING”");
    expect(formatDiffValue({ a: 1 })).toBe('{"a":1}');
    expect(formatDiffValue("x".repeat(300), 20)).toHaveLength(20);
  });

  it("builds links with escaped ids", () => {
    expect(checkpointHref("ckpt_1")).toBe("/checkpoints/ckpt_1");
    expect(taskCheckpointsHref("a/b c")).toBe("/tasks/a%2Fb%20c/checkpoints");
  });
});
