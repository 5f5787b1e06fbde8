import { describe, expect, it } from "vitest";
import { canonicalCheckpointJson, canonicalDigest } from "@/lib/model/checkpoints/checkpoint-canonical";
import {
  CheckpointRefusedError,
  OUTBOX_AGENT_ID,
  sealCheckpoint,
  verifyStoredCheckpoint,
  type CheckpointFacts,
  type StoredCheckpoint,
} from "@/lib/model/checkpoints/checkpoint-integrity";
import { signPayload, type CheckpointKeyring } from "@/lib/model/checkpoints/checkpoint-keys";
import { CHECKPOINT_SCHEMA_VERSION_V1, TASK_STATE_SCHEMA_VERSION_V1 } from "@/lib/model/checkpoints/checkpoint-schema";
import { agentTaskV1, agentTaskV2 } from "@/lib/model/workflows/agent-task";
import { seededRandom } from "@/lib/core/seeded-random";
import { signedV1Checkpoint } from "@/tests/helpers/checkpoints";
import { makeState } from "@/tests/helpers/task-states";

const keyring: CheckpointKeyring = { activeKeyId: "k1", keys: { k1: "k1-secret-0123456789abcdef0123456789abcdef" } };
const task = {
  id: "task_1",
  workflowDigest: agentTaskV2.digest,
  intentId: "intent_1",
  createdBy: "spiffe://verity.test/agent/a",
};
const context = { task: { id: task.id, workflowDigest: task.workflowDigest } };

function facts(overrides: Partial<CheckpointFacts> = {}): CheckpointFacts {
  return {
    checkpointId: "ckpt_1",
    trigger: "gate_opened",
    createdAt: new Date("2026-03-04T05:06:07.089Z"),
    createdBy: "spiffe://verity.test/agent/a",
    task,
    state: makeState(agentTaskV2, "RUNNING", {
      task_id: "task_1",
      version: 5,
      artifacts: {
        implementation_plan: "refund 25 USD",
        review_report: "looks fine; the api_key=AbC123xyz987 is in vault",
      },
      subtasks: [{ id: "issue-refund", title: "Issue the refund", mandatory: true, status: "PENDING" }],
      active_agents: ["spiffe://verity.test/agent/a"],
    }),
    inputDigest: `sha256:${"a".repeat(64)}`,
    lease: { holder: "spiffe://verity.test/agent/a", fencingToken: "7" },
    undeliveredMessageIds: ["out_1"],
    receiptIds: ["exec_1"],
    lastMessageId: "out_1",
    policyVersion: "policy:0123456789abcdef",
    ...overrides,
  };
}

function flipBit(text: string, random: () => number): string {
  const bytes = Buffer.from(text, "utf8");
  const i = Math.floor(random() * bytes.length);
  bytes[i] = bytes[i]! ^ (1 << Math.floor(random() * 8));
  return new TextDecoder("utf-8", { fatal: false }).decode(bytes);
}

function failedChecks(row: StoredCheckpoint, ring = keyring): string[] {
  return verifyStoredCheckpoint(row, ring, context)
    .report.checks.filter((c) => !c.ok)
    .map((c) => c.check);
}

describe("sealing a checkpoint", () => {
  it("writes the spec's Checkpoint v2: snapshot embedded, digests, pending work, receipts, budget, provenance, signature over the stored bytes", () => {
    const { row, document } = sealCheckpoint(facts(), keyring);
    expect(document).toMatchObject({
      schema_version: "oaies.checkpoint.v2",
      checkpoint_id: "ckpt_1",
      task_id: "task_1",
      state_version: 5,
      trigger: "gate_opened",
      created_at: "2026-03-04T05:06:07.089Z",
      workflow_definition_digest: agentTaskV2.digest,
      state_snapshot_uri: "verity:checkpoints/ckpt_1#state_snapshot",
      pending_work: [
        { agent_id: "spiffe://verity.test/agent/a", lease_id: "lease:task_1:7" },
        { agent_id: OUTBOX_AGENT_ID, message_id: "out_1" },
      ],
      tool_receipt_ids: ["exec_1"],
      budget_consumed: { currency_usd: 1, tokens: 100, hops: 3 },
      provenance: { last_message_id: "out_1", policy_version: "policy:0123456789abcdef" },
      integrity: { key_id: "k1", signature: row.signature },
    });
    expect(document.output_digest).toBe(canonicalDigest(document.state_snapshot.artifacts));
    expect(row.snapshotDigest).toBe(canonicalDigest(document.state_snapshot));
    // The stored bytes are the canonical document without its signature.
    const { signature: _sig, ...integrity } = document.integrity;
    expect(row.payload).toBe(canonicalCheckpointJson({ ...document, integrity }));
    expect(row.payload).not.toContain(row.signature);
    expect(verifyStoredCheckpoint(row, keyring, context).report).toMatchObject({
      ok: true,
      storedSchemaVersion: "oaies.checkpoint.v2",
      upgradedFrom: [],
    });
  });

  it("redacts secrets out of the snapshot before the digest and signature, and lists where", () => {
    const { row, document } = sealCheckpoint(facts(), keyring);
    expect(row.payload).not.toContain("AbC123xyz987");
    expect(document.state_snapshot.artifacts.review_report).toBe("looks fine; the api_key=[redacted] is in vault");
    expect(document.redactions).toEqual([{ path: "state_snapshot.artifacts.review_report", kind: "credential" }]);
  });

  it("records the data classes its snapshot holds, and a checkpoint sealed without them still verifies", () => {
    const { row, document } = sealCheckpoint(facts(), keyring);
    // The artifacts and the subtask's title are free text (confidential); the rest of the state is internal.
    expect(document.data_classes).toEqual(["internal", "confidential"]);
    expect(JSON.parse(row.payload).data_classes).toEqual(["internal", "confidential"]);
    const { data_classes: _classes, ...older } = JSON.parse(row.payload) as Record<string, unknown>;
    const resealed = signPayload(canonicalCheckpointJson(older), keyring);
    expect(failedChecks({ ...row, payload: canonicalCheckpointJson(older), signature: resealed.signature })).toEqual(
      [],
    );
  });

  it("never captures an invalid state: wrong schema, broken invariant, another task's state", () => {
    const broken = facts({ state: { ...facts().state, budget: { ...facts().state.budget, currency_spent_usd: 99 } } });
    expect(() => sealCheckpoint(broken, keyring)).toThrow(CheckpointRefusedError);
    expect(() => sealCheckpoint(broken, keyring)).toThrow(/budget_within_commitment/);
    const unknownStatus = facts({ state: { ...facts().state, status: "DANCING" } });
    expect(() => sealCheckpoint(unknownStatus, keyring)).toThrow(/status_in_workflow/);
    const shape = facts({ state: { ...facts().state, version: 0 } });
    expect(() => sealCheckpoint(shape, keyring)).toThrow(/TaskState v2/);
    expect(() => sealCheckpoint(facts({ task: { ...task, id: "task_2" } }), keyring)).toThrow(/not task task_2/);
    expect(() =>
      sealCheckpoint(facts({ task: { ...task, workflowDigest: `sha256:${"0".repeat(64)}` } }), keyring),
    ).toThrow(/does not have/);
  });
});

describe("verifying a stored checkpoint", () => {
  it("reports every check by name, so one failure does not hide the others", () => {
    const { row } = sealCheckpoint(facts(), keyring);
    const report = verifyStoredCheckpoint(
      { ...row, snapshotDigest: `sha256:${"f".repeat(64)}` },
      keyring,
      context,
    ).report;
    expect(report.ok).toBe(false);
    expect(Object.fromEntries(report.checks.map((c) => [c.check, c.ok]))).toEqual({
      payload_parses: true,
      payload_canonical: true,
      schema: true,
      snapshot_digest: true,
      signature: true,
      columns_match: false,
      snapshot_valid: true,
      workflow_compatible: true,
    });
    expect(report.checks.find((c) => c.check === "columns_match")?.message).toContain("snapshot_digest");
  });

  it("catches a snapshot changed and re-signed with the right key but without its digest", () => {
    const { row, document } = sealCheckpoint(facts(), keyring);
    const { signature: _s, ...integrity } = document.integrity;
    const forged = {
      ...document,
      integrity,
      state_snapshot: { ...document.state_snapshot, gates: { ...document.state_snapshot.gates, review_passed: true } },
    };
    const payload = canonicalCheckpointJson(forged);
    expect(failedChecks({ ...row, payload, signature: signPayload(payload, keyring).signature })).toEqual([
      "snapshot_digest",
    ]);
  });

  it("names an unknown key id and a key that no longer verifies", () => {
    const { row } = sealCheckpoint(facts(), keyring);
    const other: CheckpointKeyring = { activeKeyId: "k2", keys: { k2: "k2-secret-fedcba9876543210fedcba9876543210" } };
    const report = verifyStoredCheckpoint(row, other, context).report;
    expect(report.checks.find((c) => c.check === "signature")).toEqual({
      check: "signature",
      ok: false,
      message: 'key "k1" is not in this server\'s keyring (known: k2)',
    });
  });

  it("refuses a checkpoint of another workflow definition or task as incompatible", () => {
    const { row } = sealCheckpoint(facts(), keyring);
    const v1Task = verifyStoredCheckpoint(row, keyring, {
      task: { id: "task_1", workflowDigest: agentTaskV1.digest },
    }).report;
    expect(v1Task.checks.filter((c) => !c.ok).map((c) => c.check)).toEqual(["workflow_compatible"]);
    const otherTask = verifyStoredCheckpoint(row, keyring, {
      task: { id: "task_2", workflowDigest: agentTaskV2.digest },
    }).report;
    expect(otherTask.checks.find((c) => c.check === "workflow_compatible")?.message).toContain("not task_2");
  });

  it("verifies a signed v1 checkpoint and says it was upgraded", () => {
    const state = makeState(agentTaskV2, "RUNNING", { task_id: "task_1", version: 5 });
    const { row } = signedV1Checkpoint({
      state,
      checkpointId: "ckpt_v1",
      createdBy: "spiffe://verity.test/agent/a",
      createdAt: new Date("2026-01-02T03:04:05.678Z"),
      keyring,
    });
    const { report, parsed } = verifyStoredCheckpoint(row, keyring, context);
    expect(report.ok, JSON.stringify(report.checks)).toBe(true);
    expect(report.upgradedFrom).toEqual([CHECKPOINT_SCHEMA_VERSION_V1, TASK_STATE_SCHEMA_VERSION_V1]);
    expect(report.checks.find((c) => c.check === "schema")?.message).toBe(
      "oaies.checkpoint.v1, upgraded on read from oaies.checkpoint.v1 and oaies.task-state.v1",
    );
    expect(parsed?.document.state_snapshot.subtasks).toEqual([]);
  });

  it("refuses an unknown schema version by name, even when correctly signed", () => {
    const { row, document } = sealCheckpoint(facts(), keyring);
    const { signature: _s, ...integrity } = document.integrity;
    const payload = canonicalCheckpointJson({ ...document, integrity, schema_version: "oaies.checkpoint.v7" });
    const report = verifyStoredCheckpoint(
      { ...row, payload, signature: signPayload(payload, keyring).signature },
      keyring,
      context,
    ).report;
    expect(report.ok).toBe(false);
    expect(report.storedSchemaVersion).toBe("oaies.checkpoint.v7");
    expect(report.checks.find((c) => c.check === "schema")?.message).toContain(
      'Unknown checkpoint schema_version "oaies.checkpoint.v7"',
    );
  });
});

describe("corrupt checkpoint fuzz", () => {
  const { row } = sealCheckpoint(facts(), keyring);

  it("detects every one of 3,000 seeded single-bit flips of the stored payload, each by its signature", () => {
    const random = seededRandom(20261130);
    let mutated = 0;
    let detected = 0;
    let bySignature = 0;
    for (let i = 0; i < 3000; i++) {
      const payload = flipBit(row.payload, random);
      if (payload === row.payload) continue;
      mutated++;
      const failed = failedChecks({ ...row, payload });
      if (failed.length > 0) detected++;
      if (failed.includes("signature")) bySignature++;
    }
    expect(mutated).toBe(3000);
    expect(detected).toBe(mutated);
    expect(bySignature).toBe(mutated);
  });

  it("detects every truncation of the stored payload, at every length", () => {
    let detected = 0;
    for (let length = 0; length < row.payload.length; length++) {
      if (failedChecks({ ...row, payload: row.payload.slice(0, length) }).length > 0) detected++;
    }
    expect(detected).toBe(row.payload.length);
  });

  it("detects every seeded bit flip and every truncation of the signature, and every flip of the key id and digest columns", () => {
    const random = seededRandom(7);
    const cases: StoredCheckpoint[] = [];
    for (let i = 0; i < 500; i++) cases.push({ ...row, signature: flipBit(row.signature, random) });
    for (let length = 0; length < row.signature.length; length++)
      cases.push({ ...row, signature: row.signature.slice(0, length) });
    for (let i = 0; i < 200; i++) cases.push({ ...row, keyId: flipBit(row.keyId, random) });
    for (let i = 0; i < 300; i++) cases.push({ ...row, snapshotDigest: flipBit(row.snapshotDigest, random) });
    const undetected = cases.filter((c) => failedChecks(c).length === 0);
    expect(cases).toHaveLength(500 + 64 + 200 + 300);
    expect(undetected).toEqual([]);
  });
});
