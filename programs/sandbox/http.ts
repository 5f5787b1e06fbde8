import type { IncomingMessage, ServerResponse } from "node:http";
import type { ErrorBody, ErrorCode, ErrorType } from "@/lib/connectors/sandbox/contract";

/**
 * node:http plumbing for the sandbox: JSON bodies in, JSON out, and the
 * provider's error body (`{error: {type, code, message, param?}}`, Stripe's
 * shape rather than Verity's problem+json, because this plays someone else's
 * API).
 */

export class SandboxHttpError extends Error {
  constructor(
    readonly status: number,
    readonly type: ErrorType,
    readonly code: ErrorCode,
    message: string,
    readonly param?: string,
  ) {
    super(message);
    this.name = "SandboxHttpError";
  }

  toBody(): ErrorBody {
    return {
      error: { type: this.type, code: this.code, message: this.message, ...(this.param ? { param: this.param } : {}) },
    };
  }
}

export function invalidParameter(message: string, param?: string): SandboxHttpError {
  return new SandboxHttpError(400, "invalid_request_error", "parameter_invalid", message, param);
}

/** The first zod issue as a 400 naming its parameter, as Stripe does. */
export function fromZodIssues(
  issues: ReadonlyArray<{ path: PropertyKey[]; message: string; code?: string; keys?: string[] }>,
): SandboxHttpError {
  const issue = issues[0];
  if (!issue) return invalidParameter("invalid request");
  const base = issue.path.map(String).join(".");
  if (issue.code === "unrecognized_keys" && issue.keys?.length) {
    const param = base ? `${base}.${issue.keys[0]}` : String(issue.keys[0]);
    return invalidParameter(`Received unknown parameter: ${param}`, param);
  }
  return invalidParameter(base ? `Invalid ${base}: ${issue.message}` : issue.message, base || undefined);
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (res.destroyed || res.headersSent) return;
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "Content-Type": "application/json",
    "Cache-Control": "no-store",
    "Content-Length": Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

export function sendError(res: ServerResponse, error: SandboxHttpError, headers: Record<string, string> = {}): void {
  sendJson(res, error.status, error.toBody(), headers);
}

export async function readJsonBody(req: IncomingMessage, maxBytes: number): Promise<unknown> {
  const type = (req.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase();
  if (type !== "application/json") {
    throw new SandboxHttpError(
      415,
      "invalid_request_error",
      "unsupported_media_type",
      "Send the body as application/json.",
      "Content-Type",
    );
  }
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    total += chunk.byteLength;
    if (total > maxBytes)
      throw new SandboxHttpError(
        413,
        "invalid_request_error",
        "payload_too_large",
        `The body exceeds ${maxBytes} bytes.`,
      );
    chunks.push(chunk);
  }
  if (total === 0) throw invalidParameter("The request body is empty; send a JSON object.");
  try {
    return JSON.parse(Buffer.concat(chunks).toString("utf8")) as unknown;
  } catch (error) {
    throw invalidParameter(`Malformed JSON: ${error instanceof Error ? error.message : "unparseable"}`);
  }
}

/** Query parameters for a fixed set of names: an unknown or repeated one is a 400, as Stripe refuses unknown parameters. */
export function queryOf(url: URL, allowed: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of url.searchParams) {
    if (!allowed.includes(key)) throw invalidParameter(`Received unknown parameter: ${key}`, key);
    if (Object.hasOwn(out, key)) throw invalidParameter(`${key} is given more than once`, key);
    out[key] = value;
  }
  return out;
}

export function headerOf(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name.toLowerCase()];
  return Array.isArray(value) ? value.join(",") : value;
}
