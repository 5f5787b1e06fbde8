import { AppError } from "@/lib/core/errors";
import { validationError } from "@/lib/adapters/http/problem";
import { scanJsonTextDepth } from "@/lib/core/json-bounds";

/**
 * JSON request bodies. The byte limit is enforced while reading the stream:
 * Content-Length is only a shortcut for an early 413, since a chunked request
 * has none and a client may send more than it declares.
 */

/** `application/json` or any `application/*+json`; a charset, if given, must be UTF-8 (RFC 8259). */
export function assertJsonContentType(header: string | null): void {
  const [mediaType = "", ...params] = (header ?? "").split(";").map((p) => p.trim().toLowerCase());
  const isJson = mediaType === "application/json" || /^application\/[a-z0-9.!#$&^_-]+\+json$/.test(mediaType);
  if (!isJson) {
    throw new AppError(
      "unsupported_media_type",
      header
        ? `Content-Type ${mediaType || header} is not supported; send application/json.`
        : "The request has no Content-Type; send application/json.",
      {
        errors: [{ field: "Content-Type", message: "must be application/json" }],
      },
    );
  }
  const charset = params
    .find((p) => p.startsWith("charset="))
    ?.slice("charset=".length)
    .replace(/^"|"$/g, "");
  if (charset !== undefined && charset !== "utf-8" && charset !== "utf8") {
    throw new AppError("unsupported_media_type", `charset ${charset} is not supported; JSON is UTF-8.`, {
      errors: [{ field: "Content-Type", message: "charset must be utf-8" }],
    });
  }
}

function tooLarge(maxBytes: number): AppError {
  return new AppError("payload_too_large", `The request body exceeds the limit of ${maxBytes} bytes.`, { maxBytes });
}

/** The raw body bytes, failing with 413 as soon as more than `maxBytes` arrive. */
export async function readBodyBytes(request: Request, maxBytes: number): Promise<Uint8Array> {
  const declared = request.headers.get("content-length");
  if (declared !== null && /^\d+$/.test(declared) && Number(declared) > maxBytes) throw tooLarge(maxBytes);
  if (!request.body) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      // Stop pulling: the rest of an oversized body is never buffered.
      await reader.cancel().catch(() => undefined);
      throw tooLarge(maxBytes);
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}

/**
 * The parsed JSON body of a request: 415 for another media type, 413 past
 * `maxBytes`, 400 (field "") for an empty body, bytes that are not UTF-8, or
 * text that is not JSON, and 400 naming the top-level member for JSON nested
 * deeper than MAX_BODY_DEPTH. Its shape is left to the zod schema of the use case.
 */
export async function readJsonBody(request: Request, options: { maxBytes: number }): Promise<unknown> {
  assertJsonContentType(request.headers.get("content-type"));
  const bytes = await readBodyBytes(request, options.maxBytes);
  if (bytes.byteLength === 0)
    throw validationError([{ field: "", message: "the request body is empty; send a JSON object" }]);
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw validationError([{ field: "", message: "the request body is not valid UTF-8" }]);
  }
  // Measured before parsing: JSON.parse, the schema and every walk after it recurse, and a
  // body nested thousands deep would end as a stack overflow (a 500) somewhere among them.
  const depth = scanJsonTextDepth(text, MAX_BODY_DEPTH);
  if (depth.tooDeep)
    throw validationError([{ field: depth.member ?? "", message: `nests deeper than ${MAX_BODY_DEPTH} levels` }]);
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    // SyntaxError messages name the position of the fault, which helps the client and reveals nothing.
    const why = error instanceof SyntaxError ? error.message : error instanceof RangeError ? "too deep" : "unparseable";
    throw validationError([{ field: "", message: `malformed JSON: ${why}` }]);
  }
}

/**
 * No body of the API nests this deep: its free-form fields are bounded at
 * JSON_FIELD_MAX_DEPTH (lib/core/json-bounds.ts) below a few levels of envelope.
 */
const MAX_BODY_DEPTH = 64;

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
