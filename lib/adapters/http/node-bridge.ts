import type { IncomingMessage, ServerResponse } from "node:http";

/**
 * Node's HTTP request and response as the Web `Request` and `Response` the
 * route handlers take and give (lib/adapters/http/api-router.ts), for the
 * requests the server hands them without Next.js in between.
 */

/**
 * A body no larger than this is read whole before the handler runs; a larger
 * or unsized one streams, so the handler's own limit (readJsonBody's
 * maxBytes) stops it without the whole of it in memory.
 */
const BUFFERED_BODY_BYTES = 64 * 1024;

/** The Web Request for a Node request; `signal` aborts when the client goes away. */
export async function webRequestOf(req: IncomingMessage, signal: AbortSignal): Promise<Request> {
  const host = req.headers.host ?? "localhost";
  // As Next.js builds request.url: this server's scheme (TLS ends at a proxy, which says so in X-Forwarded-Proto).
  const url = `http://${host}${req.url ?? "/"}`;
  const headers = new Headers();
  for (let i = 0; i < req.rawHeaders.length; i += 2) headers.append(req.rawHeaders[i]!, req.rawHeaders[i + 1]!);
  const method = req.method ?? "GET";
  if (method === "GET" || method === "HEAD") return new Request(url, { method, headers, signal });
  const length = Number(req.headers["content-length"]);
  if (Number.isFinite(length) && length <= BUFFERED_BODY_BYTES) {
    const body = await readWhole(req);
    return new Request(url, { method, headers, signal, body: body.byteLength ? body : null });
  }
  return new Request(url, { method, headers, signal, body: bodyStream(req), duplex: "half" } as RequestInit);
}

/**
 * The request's body as a Web stream that reads only as fast as the handler
 * does. Cancelling it (a handler that refused the body: too large, wrong type)
 * stops reading without destroying the socket, so the answer still reaches the
 * client; writeWebResponse then closes the connection (the unread rest of the
 * body cannot be told from the next request).
 */
function bodyStream(req: IncomingMessage): ReadableStream<Uint8Array> {
  // Once cancelled, closed or errored, the controller may not be called again (it would
  // throw inside an event listener, which would take the server down): events after that are dropped.
  let open = true;
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        req.on("data", (chunk: Buffer) => {
          if (!open) return;
          controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
          if ((controller.desiredSize ?? 0) <= 0) req.pause();
        });
        req.on("end", () => {
          if (open) controller.close();
          open = false;
        });
        req.on("error", (error) => {
          if (open) controller.error(error);
          open = false;
        });
        req.pause();
      },
      pull() {
        req.resume();
      },
      cancel() {
        open = false;
        req.pause();
      },
    },
    { highWaterMark: BUFFERED_BODY_BYTES, size: (chunk) => chunk.byteLength },
  );
}

function readWhole(req: IncomingMessage): Promise<Buffer<ArrayBuffer>> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer<ArrayBuffer>[] = [];
    req.on("data", (chunk: Buffer<ArrayBuffer>) => chunks.push(chunk));
    req.on("end", () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

/**
 * Writes a Web Response to Node's response, streaming its body with
 * backpressure; `extraHeaders` are set over the response's own.
 */
export async function writeWebResponse(
  res: ServerResponse,
  response: Response,
  extraHeaders: Readonly<Record<string, string>> = {},
): Promise<void> {
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of response.headers) {
    // Headers joins repeated Set-Cookie values with ", "; getSetCookie keeps them apart.
    if (name === "set-cookie") headers[name] = response.headers.getSetCookie();
    else headers[name] = value;
  }
  for (const [name, value] of Object.entries(extraHeaders)) headers[name.toLowerCase()] = value;
  // A body the handler did not read to its end: what follows on this connection is not a request.
  if (!res.req.complete) headers.connection = "close";
  if (!response.body) {
    res.writeHead(response.status, headers).end();
    return;
  }
  if (isWholeBody(response.headers.get("content-type"))) {
    // A JSON answer is built whole: sent with its length in one write, not as chunks.
    const body = Buffer.from(await response.arrayBuffer());
    headers["content-length"] = String(body.byteLength);
    res.writeHead(response.status, headers).end(body);
    return;
  }
  res.writeHead(response.status, headers);
  const reader = response.body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (res.destroyed) {
        await reader.cancel();
        return;
      }
      if (!res.write(value)) await new Promise<void>((resolve) => res.once("drain", resolve).once("close", resolve));
    }
    res.end();
  } catch (error) {
    // Mid-body there is no status left to change: end the connection so the client sees the body cut short.
    res.destroy(error instanceof Error ? error : new Error(String(error)));
  }
}

/** JSON and problem+json bodies are built whole by json() and problemJson(); exports and streams are not. */
function isWholeBody(contentType: string | null): boolean {
  const type = contentType?.split(";")[0]?.trim().toLowerCase();
  return type === "application/json" || type === "application/problem+json";
}
