import { describe, expect, it } from "vitest";
import { canonicalJson } from "@/lib/core/canonical-json";
import {
  canonicalCheckpointJson,
  canonicalDigest,
  NonCanonicalValueError,
} from "@/lib/model/checkpoints/checkpoint-canonical";

describe("canonicalCheckpointJson", () => {
  it("sorts keys at every depth and writes no whitespace", () => {
    expect(canonicalCheckpointJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: "x y" } })).toBe(
      '{"a":{"c":"x y","d":[3,{"y":2,"z":1}]},"b":1}',
    );
  });

  it("gives the same bytes for equal values built in any key order, and differs when any leaf differs", () => {
    const one = { task_id: "t", gates: { plan_approved: true, review_passed: false }, list: ["a", "b"] };
    const two = { list: ["a", "b"], gates: { review_passed: false, plan_approved: true }, task_id: "t" };
    expect(canonicalCheckpointJson(one)).toBe(canonicalCheckpointJson(two));
    expect(canonicalDigest(one)).toBe(canonicalDigest(two));
    expect(canonicalDigest({ ...one, list: ["b", "a"] })).not.toBe(canonicalDigest(one));
    expect(canonicalDigest(one)).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it("is lib/core/canonical-json's form for plain JSON, so digests agree across the codebase", () => {
    const value = { z: [1, 2.5, -0, "é\u2028"], a: null, m: { k: true } };
    expect(canonicalCheckpointJson(value)).toBe(canonicalJson(value));
    expect(JSON.parse(canonicalCheckpointJson(value))).toEqual(JSON.parse(JSON.stringify(value)));
  });

  it("drops undefined members, as a JSON round trip does", () => {
    expect(canonicalCheckpointJson({ a: 1, b: undefined })).toBe('{"a":1}');
  });

  it.each([
    ["NaN", { a: Number.NaN }, "a"],
    ["Infinity", { a: { b: Number.POSITIVE_INFINITY } }, "a.b"],
    ["undefined in a list", { a: [1, undefined] }, "a[1]"],
    ["a Date", { at: new Date(0) }, "at"],
    ["a Map", { m: new Map() }, "m"],
    ["a bigint", { n: 1n }, "n"],
    ["a function", { f: () => 1 }, "f"],
  ])("refuses %s, naming where it is", (_name, value, path) => {
    expect(() => canonicalCheckpointJson(value)).toThrow(NonCanonicalValueError);
    try {
      canonicalCheckpointJson(value);
    } catch (error) {
      expect((error as NonCanonicalValueError).path).toBe(path);
    }
  });

  it("refuses a cycle instead of overflowing", () => {
    const a: Record<string, unknown> = { x: 1 };
    a.self = a;
    expect(() => canonicalCheckpointJson(a)).toThrow(/circular/);
  });

  it("accepts a value shared twice without a cycle", () => {
    const shared = { k: 1 };
    expect(canonicalCheckpointJson({ a: shared, b: shared })).toBe('{"a":{"k":1},"b":{"k":1}}');
  });
});
