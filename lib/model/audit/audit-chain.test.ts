import { describe, expect, it } from "vitest";
import {
  chainHash,
  contentDigestOf,
  GENESIS_HASH,
  MAX_DETAILS_BYTES,
  normalizeDetails,
  REDACTED,
  StreamVerifier,
  streamFor,
  type AuditContent,
  type AuditLink,
} from "@/lib/model/audit/audit-chain";

function content(n: number, overrides: Partial<AuditContent> = {}): AuditContent {
  return {
    id: `aud_${n}`,
    stream: "task:t1",
    at: new Date(Date.UTC(2026, 0, 1, 0, 0, n)),
    actor: "spiffe://verity.local/agent/a",
    actorKind: "agent",
    action: "task.transitioned",
    subjectType: "task",
    subjectId: "t1",
    taskId: "t1",
    details: { to_version: n + 1 },
    ...overrides,
  };
}

/** A correctly linked chain, built the way the database trigger builds it. */
function chain(length: number): AuditLink[] {
  const links: AuditLink[] = [];
  let prev = GENESIS_HASH;
  for (let seq = 1; seq <= length; seq++) {
    const c = content(seq);
    const hash = chainHash(prev, seq, contentDigestOf(c));
    links.push({ ...c, seq, prevHash: prev, hash });
    prev = hash;
  }
  return links;
}

function verify(
  links: AuditLink[],
  head = { lastSeq: links.length, lastHash: links[links.length - 1]?.hash ?? GENESIS_HASH },
) {
  const v = new StreamVerifier("task:t1");
  for (const l of links) v.add(l, contentDigestOf(l));
  return v.finish(head);
}

describe("the audit chain's format", () => {
  it("hashes a link exactly as audit_link_hash() in the migrations does", () => {
    // The value PostgreSQL 15 and PGlite returned for audit_chain_hash(64 zeros, 1, 'd1'), the same function before its rename.
    expect(chainHash(GENESIS_HASH, 1, "d1")).toBe("f9a5d29358bdfa9869488429a5c4c06bf9dc79806c07b09e44a20cad8d2191c1");
  });

  it("gives each aggregate its own chain, sign-ins and denials the auth chain, the rest the system chain", () => {
    expect(streamFor({ action: "task.transitioned", subject: { type: "task", id: "t9" } })).toBe("task:t9");
    expect(streamFor({ action: "review.decided", subject: { type: "review", id: "rev_1" } })).toBe("review:rev_1");
    expect(streamFor({ action: "auth.denied", subject: { type: "permission", id: "audit:read" } })).toBe("auth");
    expect(streamFor({ action: "audit.legal_hold_placed", subject: { type: "legal_hold", id: "hold_1" } })).toBe(
      "system",
    );
  });

  it("changes the content digest when any field changes", () => {
    const base = contentDigestOf(content(1));
    const variants: Array<Partial<AuditContent>> = [
      { id: "aud_x" },
      { stream: "task:t2" },
      { at: new Date(Date.UTC(2026, 0, 1, 0, 0, 1, 1)) },
      { actor: "spiffe://verity.local/agent/b" },
      { actorKind: "user" },
      { action: "task.created" },
      { subjectType: "execution" },
      { subjectId: "t2" },
      { taskId: null },
      { details: { to_version: 3 } },
    ];
    for (const v of variants) expect(contentDigestOf(content(1, v)), JSON.stringify(v)).not.toBe(base);
    // Key order is not content: the canonical form sorts keys.
    expect(contentDigestOf(content(1, { details: { b: 1, a: 2 } }))).toBe(
      contentDigestOf(content(1, { details: { a: 2, b: 1 } })),
    );
  });
});

describe("details", () => {
  it("redacts credentials at any depth and keeps fencing tokens and the rest", () => {
    const out = normalizeDetails({
      username: "ada",
      password: "hunter2",
      request: { headers: { Authorization: "Bearer x", cookie: "s=1" }, api_key: "k", fencing_token: "17" },
      tokens: [{ access_token: "a" }],
    });
    expect(out).toEqual({
      username: "ada",
      password: REDACTED,
      request: { headers: { Authorization: REDACTED, cookie: REDACTED }, api_key: REDACTED, fencing_token: "17" },
      tokens: [{ access_token: REDACTED }],
    });
  });

  it("stores what jsonb gives back: no undefined, dates as strings, no NUL, no lone surrogate", () => {
    expect(normalizeDetails({ a: undefined, d: new Date(0), s: "x\u0000y", ["k\u0000"]: ["\ud800!"] })).toEqual({
      d: "1970-01-01T00:00:00.000Z",
      s: "xy",
      k: ["\ufffd!"],
    });
  });

  it("replaces oversized details by their size and digest instead of failing the write", () => {
    const out = normalizeDetails({ blob: "x".repeat(MAX_DETAILS_BYTES) });
    expect(out).toMatchObject({
      details_omitted: expect.any(String),
      bytes: expect.any(Number),
      sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
  });
});

describe("StreamVerifier", () => {
  it("accepts an intact chain", () => {
    expect(verify(chain(5))).toBeNull();
  });

  it("names an edited entry", () => {
    const links = chain(5);
    links[2] = { ...links[2]!, actor: "spiffe://verity.local/agent/mallory" };
    expect(verify(links)).toMatchObject({ kind: "entry_edited", seq: 3, entryId: "aud_3" });
  });

  it("names a re-hashed entry by the broken link after it", () => {
    const links = chain(5);
    const forged = { ...links[2]!, actor: "spiffe://verity.local/agent/mallory" };
    forged.hash = chainHash(forged.prevHash, 3, contentDigestOf(forged));
    links[2] = forged;
    expect(verify(links)).toMatchObject({
      kind: "link_broken",
      seq: 4,
      entryId: "aud_4",
      found: links[3]!.prevHash,
      expected: forged.hash,
    });
  });

  it("names a deleted entry by the gap, and a deleted tail by the head", () => {
    const links = chain(5);
    expect(verify([...links.slice(0, 2), ...links.slice(3)], { lastSeq: 5, lastHash: links[4]!.hash })).toMatchObject({
      kind: "entries_missing",
      seq: 4,
      expected: "seq 3",
      found: "seq 4",
    });
    expect(verify(links.slice(0, 4), { lastSeq: 5, lastHash: links[4]!.hash })).toMatchObject({
      kind: "entries_missing",
      seq: 5,
      entryId: null,
    });
  });

  it("names an entry appended past the head", () => {
    const links = chain(6);
    expect(verify(links, { lastSeq: 5, lastHash: links[4]!.hash })).toMatchObject({
      kind: "entry_unexpected",
      seq: 6,
      entryId: "aud_6",
    });
  });

  it("starts a stream at its retention anchor", () => {
    const links = chain(5);
    const v = new StreamVerifier("task:t1", { afterSeq: 2, prevHash: links[1]!.hash });
    for (const l of links.slice(2)) v.add(l, contentDigestOf(l));
    expect(v.finish({ lastSeq: 5, lastHash: links[4]!.hash })).toBeNull();
    const wrongAnchor = new StreamVerifier("task:t1", { afterSeq: 2, prevHash: links[0]!.hash });
    wrongAnchor.add(links[2]!, contentDigestOf(links[2]!));
    expect(wrongAnchor.firstBreak).toMatchObject({ kind: "link_broken", seq: 3 });
  });
});
