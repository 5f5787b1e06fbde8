import { describe, expect, it } from "vitest";
import { canonicalJson, digestOf, sha256Hex } from "@/lib/core/canonical-json";

const sample = {
  op: "transition",
  task_id: "task_1",
  expected_version: 3,
  to: "RUNNING",
  patch: {
    gates: { plan_approved: true, review_passed: false },
    subtasks: [{ id: "a", status: "COMPLETED" }, { id: "b" }],
    budget: { hops_used: 4, currency_spent_usd: 0.25 },
  },
  reason: null,
};

/** Every path to a leaf of a JSON value. */
function leafPaths(value: unknown, prefix: Array<string | number> = []): Array<Array<string | number>> {
  if (Array.isArray(value)) return value.flatMap((v, i) => leafPaths(v, [...prefix, i]));
  if (value && typeof value === "object")
    return Object.entries(value).flatMap(([k, v]) => leafPaths(v, [...prefix, k]));
  return [prefix];
}

function withLeaf(value: unknown, path: Array<string | number>, change: (leaf: unknown) => unknown): unknown {
  const copy = structuredClone(value) as Record<string | number, unknown>;
  let node = copy;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, unknown>;
  const last = path[path.length - 1]!;
  node[last] = change(node[last]);
  return copy;
}

describe("canonicalJson", () => {
  it("sorts keys at every depth and drops undefined members", () => {
    expect(canonicalJson({ b: 1, a: { d: [{ z: 1, y: 2 }], c: undefined } })).toBe('{"a":{"d":[{"y":2,"z":1}]},"b":1}');
  });

  it("keeps array order and null", () => {
    expect(canonicalJson([3, 1, null])).toBe("[3,1,null]");
    expect(canonicalJson({ a: null })).toBe('{"a":null}');
  });

  it("writes dates as ISO strings", () => {
    expect(canonicalJson({ at: new Date("2026-01-02T03:04:05.006Z") })).toBe('{"at":"2026-01-02T03:04:05.006Z"}');
  });
});

describe("digestOf", () => {
  it("is sha256 of the canonical JSON", () => {
    expect(digestOf(sample)).toBe(`sha256:${sha256Hex(canonicalJson(sample))}`);
    expect(digestOf({})).toBe("sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a");
  });

  it("is stable for the same data whatever the key order or undefined members", () => {
    const reordered = Object.fromEntries(Object.entries(sample).reverse());
    const reversedDeep = {
      reason: null,
      patch: {
        budget: { currency_spent_usd: 0.25, hops_used: 4 },
        subtasks: sample.patch.subtasks,
        gates: { review_passed: false, plan_approved: true },
      },
      to: "RUNNING",
      expected_version: 3,
      task_id: "task_1",
      op: "transition",
      extra: undefined,
    };
    expect(digestOf(reordered)).toBe(digestOf(sample));
    expect(digestOf(reversedDeep)).toBe(digestOf(sample));
    expect(digestOf(structuredClone(sample))).toBe(digestOf(sample));
  });

  const paths = leafPaths(sample);
  it.each(paths.map((p) => [p.join("."), p] as const))("changes when %s changes", (_label, path) => {
    const changed = withLeaf(sample, path, (leaf) => {
      if (typeof leaf === "number") return leaf + 1;
      if (typeof leaf === "boolean") return !leaf;
      if (typeof leaf === "string") return `${leaf}x`;
      return "not null";
    });
    expect(digestOf(changed)).not.toBe(digestOf(sample));
  });

  it("tells apart values JSON could confuse", () => {
    const pairs: Array<[unknown, unknown]> = [
      [{ a: 1 }, { a: "1" }],
      [{ a: null }, {}],
      [{ a: [] }, { a: {} }],
      [
        [1, 2],
        [2, 1],
      ],
      [{ a: { b: 1 } }, { "a.b": 1 }],
      [{ patch: {} }, { patch: { gates: {} } }],
    ];
    for (const [x, y] of pairs) expect(digestOf(x)).not.toBe(digestOf(y));
  });

  it("changes when a member is added or removed", () => {
    expect(digestOf({ ...sample, reason: "retry" })).not.toBe(digestOf(sample));
    const { reason: _dropped, ...without } = sample;
    expect(digestOf(without)).not.toBe(digestOf(sample));
  });
});
