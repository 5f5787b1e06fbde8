import { describe, expect, it } from "vitest";
import { ExecutionStatus } from "@/lib/generated/prisma/enums";
import {
  approvalHeadline,
  approvalState,
  decisionRounds,
  describeDivergenceKind,
  divergenceDifferences,
  executionStatusInfo,
  formatMoney,
  summarizeEvidence,
} from "@/lib/adapters/console/reviews/reviews-format";
import { parseReviewTab, reviewListHref } from "@/lib/adapters/console/reviews/reviews-query";

const olivia = "spiffe://verity.local/user/operator";
const omar = "spiffe://verity.local/user/operator2";

describe("formatMoney", () => {
  it("uses the currency's own decimals", () => {
    expect(formatMoney(125_000, "usd")).toBe("$1,250.00");
    expect(formatMoney(5, "eur")).toBe("€0.05");
    expect(formatMoney(1200, "jpy")).toBe("¥1,200");
  });

  it("never hides the amount behind an unknown currency", () => {
    expect(formatMoney(100, "not-a-currency")).toBe("100 NOT-A-CURRENCY (minor units)");
  });
});

describe("four-eyes in words", () => {
  type Kind = "approve_execute" | "approve_accept_evidence" | "reject" | "escalate";
  const open = (
    requiredApprovals: number,
    decisions: Array<{ kind: Kind; actor: string; round?: number }>,
    round = 1,
  ) => ({
    status: "OPEN" as const,
    requiredApprovals,
    round,
    decisions: decisions.map((d) => ({ round: 1, ...d })),
  });

  it("says how many different people must approve before anything happens", () => {
    const state = approvalState(open(2, []), olivia);
    expect(state.summary).toBe("0 of 2 approvals");
    expect(approvalHeadline(state, "OPEN")).toBe("0 of 2 approvals: needs 2 different operators");
    expect(state.detail).toMatch(/approval of 2 different operators/);
    expect(approvalHeadline(approvalState(open(1, [])), "OPEN")).toBe("0 of 1 approval: needs one operator");
  });

  it("after the first approval, waits for a second operator, and tells the first one they cannot give it", () => {
    const review = open(2, [{ kind: "approve_execute", actor: olivia }]);
    const forOmar = approvalState(review, omar);
    expect(approvalHeadline(forOmar, "OPEN")).toBe("1 of 2 approvals: waiting for a second operator");
    expect(forOmar.viewerApproved).toBe(false);
    expect(forOmar.detail).toBe("user/operator approved re-execution. Waiting for a second, different operator.");
    const forOlivia = approvalState(review, olivia);
    expect(forOlivia.viewerApproved).toBe(true);
    expect(forOlivia.viewerDecision).toBe("approved re-execution");
    expect(forOlivia.detail).toMatch(/nobody decides twice on one review/);
  });

  it("counts only approvals to re-execute, once per person", () => {
    const state = approvalState(
      open(2, [
        { kind: "approve_execute", actor: olivia },
        { kind: "approve_execute", actor: olivia },
        { kind: "escalate", actor: omar },
      ]),
      omar,
    );
    expect(state.approvers).toEqual([olivia]);
    expect(state.summary).toBe("1 of 2 approvals");
    expect(state.viewerDecided).toBe(true);
    expect(state.detail).toMatch(/^You escalated\. Someone else must decide now/);
  });

  it("an escalated review is still waiting", () => {
    const state = approvalState(
      {
        status: "ESCALATED",
        requiredApprovals: 1,
        round: 1,
        decisions: [{ kind: "escalate", actor: olivia, round: 1 }],
      },
      omar,
    );
    expect(approvalHeadline(state, "ESCALATED")).toBe("0 of 1 approval: needs one operator");
    expect(state.detail).toBe("One operator's approval re-executes it.");
  });

  it("counts an accepted evidence as the one approval it needed, not as 0 of 1", () => {
    const state = approvalState({
      status: "APPROVED",
      requiredApprovals: 2,
      round: 1,
      decisions: [{ kind: "approve_accept_evidence", actor: olivia, round: 1 }],
    });
    expect(state.summary).toBe("1 of 1 approval (the provider's evidence, nothing sent)");
    expect(state.approvers).toEqual([olivia]);
    expect(state.required).toBe(1);
  });

  it("a decided review just says so", () => {
    const state = approvalState({
      status: "APPROVED",
      requiredApprovals: 2,
      round: 1,
      decisions: [
        { kind: "approve_execute", actor: olivia, round: 1 },
        { kind: "approve_execute", actor: omar, round: 1 },
      ],
    });
    expect(approvalHeadline(state, "APPROVED")).toBe("2 of 2 approvals");
    expect(state.detail).toBe("Re-executed on the approval of user/operator and user/operator2.");
    expect(
      approvalState({
        status: "REJECTED",
        requiredApprovals: 1,
        round: 1,
        decisions: [{ kind: "reject", actor: omar, round: 1 }],
      }).detail,
    ).toBe("Rejected: user/operator2 rejected.");
    expect(approvalState({ status: "APPROVED", requiredApprovals: 1, round: 1, decisions: [] }).detail).toMatch(
      /without a decision here/,
    );
  });

  it("counts only the current round: after a reopen, the same people may approve again and start from zero", () => {
    const earlier = [
      { kind: "approve_execute" as const, actor: olivia },
      { kind: "approve_execute" as const, actor: omar },
    ];
    const reopened = open(2, earlier, 2);
    const forOlivia = approvalState(reopened, olivia);
    expect(forOlivia).toMatchObject({ approvers: [], viewerDecided: false, summary: "0 of 2 approvals" });
    expect(approvalHeadline(forOlivia, "OPEN")).toBe("0 of 2 approvals: needs 2 different operators");

    const half = open(2, [...earlier, { kind: "approve_execute", actor: olivia, round: 2 }], 2);
    expect(approvalState(half, olivia)).toMatchObject({
      approvers: [olivia],
      viewerDecided: true,
      summary: "1 of 2 approvals",
    });
    expect(approvalState(half, olivia).detail).toMatch(/nobody decides twice in one round/);
    expect(approvalState(half, omar).viewerDecided).toBe(false);
  });

  it("groups decisions by round, current first, and says why each earlier round ended", () => {
    const review = open(
      1,
      [
        { kind: "escalate", actor: olivia },
        { kind: "approve_execute", actor: omar },
        { kind: "approve_execute", actor: olivia, round: 3 },
      ],
      3,
    );
    const rounds = decisionRounds(review);
    expect(rounds.map((r) => [r.round, r.current, r.decisions.map((d) => d.actor)])).toEqual([
      [3, true, [olivia]],
      [2, false, []],
      [1, false, [olivia, omar]],
    ]);
    expect(rounds[0]!.note).toMatch(/^Reopened: the outcome after round 2 was unknown again/);
    expect(rounds[1]!.note).toBe(
      "Did not settle it: the outcome of an attempt after this round was unknown, so the review reopened as round 3.",
    );
    expect(decisionRounds(open(1, [])).map((r) => [r.round, r.current])).toEqual([[1, true]]);
  });
});

describe("execution statuses", () => {
  it("has words for every status, and unknown and frozen look different from each other and from everything else", () => {
    expect(Object.keys(executionStatusInfo).sort()).toEqual(Object.values(ExecutionStatus).sort());
    const unknown = executionStatusInfo.OUTCOME_UNKNOWN;
    const frozen = executionStatusInfo.NEEDS_HUMAN;
    expect(unknown.tone).not.toBe(frozen.tone);
    expect(unknown.glyph).not.toBe(frozen.glyph);
    for (const [status, info] of Object.entries(executionStatusInfo)) {
      if (status !== "OUTCOME_UNKNOWN") expect(info.tone).not.toBe("unknown");
      if (status !== "NEEDS_HUMAN") expect(info.tone).not.toBe("frozen");
    }
  });
});

describe("summarizeEvidence", () => {
  it("puts what a person looks for first and flattens nested records", () => {
    expect(
      summarizeEvidence({
        bodyDigest: "sha256:ab",
        provider: "sandbox",
        operation: "refunds.lookup",
        httpStatus: 200,
        record: { id: "re_1", amount_cents: 500 },
      }),
    ).toBe(
      "provider: sandbox · operation: refunds.lookup · httpStatus: 200 · bodyDigest: sha256:ab · record.id: re_1 · record.amount_cents: 500",
    );
    expect(
      summarizeEvidence({ request: { amount_cents: 9000 }, mismatches: ["amount_cents"], execution_status: "SENT" }),
    ).toBe("mismatches: amount_cents · execution_status: SENT · request.amount_cents: 9000");
  });

  it("cuts long text and handles non-objects", () => {
    expect(summarizeEvidence({ message: "x".repeat(300) }, 20)).toHaveLength(20);
    expect(summarizeEvidence(null)).toBe("");
    expect(summarizeEvidence("plain")).toBe("plain");
    expect(summarizeEvidence([1, 2])).toBe("2 items");
  });
});

describe("divergence kinds and queue tabs", () => {
  it("names known kinds in words and shows unknown ones as they are", () => {
    expect(describeDivergenceKind("effect_missing_at_provider")).toMatch(/provider has no such effect/);
    expect(describeDivergenceKind("something_new")).toBe("something_new");
  });

  it("reads the tab from the URL, falling back to the waiting queue", () => {
    expect(parseReviewTab(undefined)).toBe("WAITING");
    expect(parseReviewTab("approved")).toBe("APPROVED");
    expect(parseReviewTab(["escalated", "x"])).toBe("ESCALATED");
    expect(parseReviewTab("bogus")).toBe("WAITING");
    expect(reviewListHref("WAITING")).toBe("/reviews");
    expect(reviewListHref("ALL")).toBe("/reviews?status=all");
  });
});

describe("divergenceDifferences", () => {
  it("puts what Verity asked beside what the provider has, field by field", () => {
    const internal = {
      execution_status: "OUTCOME_UNKNOWN",
      request: { amount_cents: 9000, currency: "usd" },
      idempotency_key: "vrt:t:1",
    };
    const external = {
      mismatches: ["amount_cents", "idempotency_key", "metadata.execution_id"],
      record: { amount_cents: 9900, idempotency_key: "vrt:t:2", metadata: { execution_id: "exec_2" } },
    };
    expect(divergenceDifferences(internal, external)).toEqual([
      { field: "amount_cents", ours: "9000", theirs: "9900" },
      { field: "idempotency_key", ours: "vrt:t:1", theirs: "vrt:t:2" },
      { field: "metadata.execution_id", ours: "—", theirs: "exec_2" },
    ]);
    expect(divergenceDifferences({}, { evidence: {} })).toEqual([]);
  });
});
