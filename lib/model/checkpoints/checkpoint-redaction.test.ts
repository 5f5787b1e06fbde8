import { describe, expect, it } from "vitest";
import { REDACTED, redactForCheckpoint, redactText } from "@/lib/model/checkpoints/checkpoint-redaction";

const secrets: Array<[string, string, string]> = [
  [
    "Verity API token",
    "deploy with vrt_demo_refund_bot_token_for_local_use_only now",
    "vrt_demo_refund_bot_token_for_local_use_only",
  ],
  ["Stripe secret key", "key sk_live_51HxYzAbCdEfGhIjKlMn in config", "sk_live_51HxYzAbCdEfGhIjKlMn"],
  ["sk- style key", "OPENAI=sk-proj-AbCdEfGhIjKlMnOpQrSt", "sk-proj-AbCdEfGhIjKlMnOpQrSt"],
  ["bearer credential", "curl -H 'Authorization: Bearer abc.DEF-123_456~xyz' https://x", "abc.DEF-123_456~xyz"],
  [
    "JWT",
    "session eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c end",
    "eyJhbGciOiJIUzI1NiJ9",
  ],
  ["AWS access key", "aws AKIAIOSFODNN7EXAMPLE configured", "AKIAIOSFODNN7EXAMPLE"],
  ["GitHub token", "ghp_0123456789abcdefABCDEF0123 pushed", "ghp_0123456789abcdefABCDEF0123"],
  ["password assignment", "db password=hunter2hunter2 on host", "hunter2hunter2"],
  ["password in words", "the password is hunter2", "hunter2"],
  ["api_key: value", 'config {"api_key": "AbC123xyz987"}', "AbC123xyz987"],
  ["PEM private key", "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----", "MIIEow"],
  ["tagged reasoning", "Plan: refund. <thinking>the customer seems angry, maybe lie</thinking> Done.", "maybe lie"],
  ["unclosed reasoning tag", "ok <scratchpad>half a thought that never ends", "half a thought"],
];

describe("checkpoint redaction", () => {
  it.each(secrets)("removes a %s from free text", (_name, text, secret) => {
    const redactions: Parameters<typeof redactText>[2] = [];
    const out = redactText(text, "state_snapshot.artifacts.review_report", redactions);
    expect(out).not.toContain(secret);
    expect(redactions.length).toBeGreaterThan(0);
    expect(redactions.every((r) => r.path === "state_snapshot.artifacts.review_report")).toBe(true);
    // Never longer than before: a redacted snapshot still fits TaskState's limits.
    expect(out.length).toBeLessThanOrEqual(text.length);
  });

  it("leaves ordinary text, identities, ids and idempotency keys alone", () => {
    const plain = [
      "spiffe://verity.local/agent/refund-bot",
      "vrt:task_01kabc:refund-1",
      "exec_01kq8z9y0w1x2v3u4t5s6r7q8p",
      "task_sk_live_is_not_a_key",
      "Refund 25 USD to cus_1 for order 1001; tokens_spent went up.",
      "plans/audit-filter.md",
    ];
    for (const text of plain) expect(redactText(text)).toBe(text);
  });

  it("replaces values of members named like secrets and drops members named like reasoning, anywhere in a document", () => {
    const doc = {
      state_snapshot: { artifacts: { review_report: "fine" }, budget: { tokens_spent: 1800 } },
      metadata: {
        password: "p",
        nested: [{ Authorization: "Bearer x" }, { chain_of_thought: "step 1, step 2" }],
        reasoning: "because",
      },
    };
    const { value, redactions } = redactForCheckpoint(doc);
    expect(value.metadata.password).toBe(REDACTED);
    expect(value.metadata.nested[0]).toEqual({ Authorization: REDACTED });
    expect(value.metadata.nested[1]).toEqual({});
    expect("reasoning" in value.metadata).toBe(false);
    // tokens_spent is a count, not a token.
    expect(value.state_snapshot.budget.tokens_spent).toBe(1800);
    expect(redactions).toEqual(
      expect.arrayContaining([
        { path: "metadata.password", kind: "credential" },
        { path: "metadata.nested[0].Authorization", kind: "credential" },
        { path: "metadata.nested[1].chain_of_thought", kind: "reasoning" },
        { path: "metadata.reasoning", kind: "reasoning" },
      ]),
    );
    expect(JSON.stringify(value)).not.toMatch(/step 1|because|Bearer x/);
    // The input is not modified: the task keeps its state; only the checkpoint is redacted.
    expect(doc.metadata.password).toBe("p");
  });

  it("walks into lists of free text (code_files) and subtask titles", () => {
    const state = {
      code_files: ["lib/a.ts", "notes: token=abcdef123456"],
      subtasks: [{ id: "s", title: "use sk_test_0123456789abcdef" }],
    };
    const { value, redactions } = redactForCheckpoint(state, "state_snapshot");
    expect(JSON.stringify(value)).not.toMatch(/abcdef123456|sk_test_0123456789abcdef/);
    expect(value.code_files[0]).toBe("lib/a.ts");
    expect(redactions.map((r) => r.path).sort()).toEqual([
      "state_snapshot.code_files[1]",
      "state_snapshot.subtasks[0].title",
    ]);
  });
});
