import { canonicalJson, sha256Hex } from "@/lib/core/canonical-json";

/**
 * The bytes a checkpoint is signed over. The rule is lib/core/canonical-json.ts's
 * (keys sorted at every depth, no whitespace), held to plain JSON first:
 * `JSON.stringify` would quietly turn NaN into null, drop a function, or
 * call a Date's toJSON, and then the bytes signed would not say what the
 * caller handed in. Here any such value is refused instead, with its path.
 */
export class NonCanonicalValueError extends Error {
  constructor(
    readonly path: string,
    what: string,
  ) {
    super(`${path || "(document)"}: ${what} has no canonical JSON form`);
    this.name = "NonCanonicalValueError";
  }
}

export function canonicalCheckpointJson(value: unknown): string {
  assertPlainJson(value, "", new Set());
  return canonicalJson(value);
}

/** `sha256:<hex>` of the canonical bytes of a value: how a snapshot is pinned. */
export function canonicalDigest(value: unknown): string {
  return `sha256:${sha256Hex(canonicalCheckpointJson(value))}`;
}

function assertPlainJson(value: unknown, path: string, seen: Set<object>): void {
  switch (typeof value) {
    case "string":
    case "boolean":
      return;
    case "number":
      if (!Number.isFinite(value)) throw new NonCanonicalValueError(path, String(value));
      return;
    case "object": {
      if (value === null) return;
      if (seen.has(value)) throw new NonCanonicalValueError(path, "a circular reference");
      seen.add(value);
      if (Array.isArray(value)) {
        value.forEach((item, i) => {
          if (item === undefined) throw new NonCanonicalValueError(`${path}[${i}]`, "undefined");
          assertPlainJson(item, `${path}[${i}]`, seen);
        });
      } else {
        const proto = Object.getPrototypeOf(value);
        if (proto !== Object.prototype && proto !== null)
          throw new NonCanonicalValueError(path, `a ${proto?.constructor?.name ?? "non-plain"} object`);
        for (const [key, member] of Object.entries(value)) {
          // Undefined members are dropped by the canonical form, as in a JSON round trip.
          if (member !== undefined) assertPlainJson(member, path ? `${path}.${key}` : key, seen);
        }
      }
      seen.delete(value);
      return;
    }
    default:
      throw new NonCanonicalValueError(path, typeof value === "undefined" ? "undefined" : `a ${typeof value}`);
  }
}
