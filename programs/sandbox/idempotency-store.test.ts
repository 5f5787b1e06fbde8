import { describe, expect, it } from "vitest";
import { IdempotencyStore } from "@/programs/sandbox/idempotency-store";

describe("IdempotencyStore", () => {
  it("claims once; the same request then waits, a different one is refused", () => {
    const store = new IdempotencyStore();
    expect(store.claim("refunds", "k", "fp1")).toEqual({ kind: "claimed" });
    expect(store.claim("refunds", "k", "fp1")).toEqual({ kind: "in_flight" });
    expect(store.claim("refunds", "k", "fp2")).toEqual({ kind: "mismatch" });
    expect(store.isInFlight("refunds", "k")).toBe(true);
  });

  it("replays a completed key and never completes it twice", () => {
    const store = new IdempotencyStore();
    store.claim("refunds", "k", "fp1");
    store.complete("refunds", "k", "fp1", { status: 200, body: { id: "re_1" } });
    expect(store.claim("refunds", "k", "fp1")).toEqual({
      kind: "replay",
      response: { status: 200, body: { id: "re_1" } },
    });
    expect(store.claim("refunds", "k", "fp2")).toEqual({ kind: "mismatch" });
    expect(() => store.complete("refunds", "k", "fp1", { status: 200, body: {} })).toThrow(/completed twice/);
  });

  it("a released claim can be taken again; a completed one cannot be released", () => {
    const store = new IdempotencyStore();
    store.claim("refunds", "k", "fp1");
    store.release("refunds", "k");
    expect(store.claim("refunds", "k", "fp2")).toEqual({ kind: "claimed" });
    store.complete("refunds", "k", "fp2", { status: 200, body: null });
    store.release("refunds", "k");
    expect(store.claim("refunds", "k", "fp2").kind).toBe("replay");
  });

  it("keeps namespaces apart", () => {
    const store = new IdempotencyStore();
    store.claim("refunds", "k", "fp1");
    expect(store.claim("crm_notes", "k", "fp9")).toEqual({ kind: "claimed" });
  });
});
