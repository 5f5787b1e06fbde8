import { isPlainObject } from "@/lib/adapters/http/body";
import { validationError } from "@/lib/adapters/http/problem";

/**
 * A task's ETag is its version, `"5"`: the version is the compare-and-swap
 * target, so the tag a client read is exactly the `expected_version` of its
 * next write.
 */
export function etagOf(version: number): string {
  return `"${version}"`;
}

/** One validator: `"5"`, `W/"5"`, or a bare `5` (lenient, agents often send the number). */
function versionOfTag(tag: string): number | undefined {
  const m = /^(?:W\/)?"(\d{1,15})"$/.exec(tag) ?? /^(\d{1,15})$/.exec(tag);
  if (!m?.[1]) return undefined;
  const n = Number(m[1]);
  return n >= 1 ? n : undefined;
}

/**
 * The version an If-Match header expects, undefined when there is none. A
 * list or `*` is refused: a write must name the one version it was based on,
 * or a stale agent could overwrite a newer state.
 */
export function parseIfMatch(header: string | null): number | undefined {
  if (header === null || header.trim() === "") return undefined;
  const value = header.trim();
  const version = versionOfTag(value);
  if (version !== undefined) return version;
  const message =
    value === "*"
      ? 'If-Match: * is not accepted; send the version you read, e.g. If-Match: "5"'
      : value.includes(",")
        ? 'send exactly one version, e.g. If-Match: "5"'
        : 'must be the task version you read as an ETag, e.g. If-Match: "5"';
  throw validationError([{ field: "If-Match", message }]);
}

/** True when If-None-Match names the current version (or is `*`): answer 304. */
export function ifNoneMatchHits(header: string | null, version: number): boolean {
  if (header === null) return false;
  return header.split(",").some((t) => {
    const tag = t.trim();
    return tag === "*" || versionOfTag(tag) === version;
  });
}

/**
 * The transition body with `expected_version` filled in from If-Match.
 * Both may be sent; when they disagree the request is ambiguous and refused
 * rather than guessing which version the client meant. With neither, the body
 * is returned as it is and the schema reports the missing field.
 */
export function withExpectedVersion(body: unknown, ifMatch: number | undefined): unknown {
  if (!isPlainObject(body) || ifMatch === undefined) return body;
  const inBody = body.expected_version;
  if (inBody === undefined) return { ...body, expected_version: ifMatch };
  // A body value of the wrong type is left to the schema, which names the type.
  if (typeof inBody === "number" && inBody !== ifMatch) {
    throw validationError([
      {
        field: "expected_version",
        message: `is ${inBody} but If-Match says ${ifMatch}; send one, or the same in both`,
      },
    ]);
  }
  return body;
}
