import { describe, expect, it } from "vitest";
import { z } from "zod";
import { boundedJson, jsonDepth, scanJsonTextDepth } from "@/lib/core/json-bounds";

/** `{"a":{"a":…{"a":1}…}}` nested `depth` deep. */
function nested(depth: number): Record<string, unknown> {
  let value: Record<string, unknown> = { a: 1 };
  for (let i = 1; i < depth; i++) value = { a: value };
  return value;
}

describe("jsonDepth", () => {
  it("measures nesting without recursion, at any depth", () => {
    expect(jsonDepth(1)).toBe(0);
    expect(jsonDepth({})).toBe(1);
    expect(jsonDepth([[], { a: [1] }])).toBe(3);
    expect(jsonDepth(nested(100_000))).toBe(100_000);
    expect(jsonDepth(nested(100_000), 32)).toBe(33);
  });
});

describe("scanJsonTextDepth", () => {
  it("finds the top-level member that nests too deep, skipping brackets inside strings", () => {
    expect(scanJsonTextDepth(JSON.stringify({ s: "[[[[[[", ok: [[1]] }), 3)).toEqual({ tooDeep: false });
    expect(scanJsonTextDepth(JSON.stringify({ 'a"]': 1, evidence: nested(5) }), 4)).toEqual({
      tooDeep: true,
      member: "evidence",
    });
    expect(scanJsonTextDepth("[".repeat(8000) + "]".repeat(8000), 64)).toEqual({ tooDeep: true, member: null });
  });
});

describe("boundedJson", () => {
  it("keeps the schema's own rules and custom bounds", () => {
    const schema = boundedJson(z.record(z.string(), z.unknown()), { maxDepth: 2, maxBytes: 20 });
    expect(schema.safeParse({ a: { b: 1 } }).success).toBe(true);
    expect(schema.safeParse({ a: { b: { c: 1 } } }).success).toBe(false);
    expect(schema.safeParse({ a: "x".repeat(20) }).success).toBe(false);
    expect(schema.safeParse([1]).success).toBe(false);
  });
});
