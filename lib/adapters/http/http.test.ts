import { describe, expect, it, vi } from "vitest";
import { AppError } from "@/lib/core/errors";
import { authenticateBearer, bearerTokenOf } from "@/lib/adapters/http/bearer";
import { readJsonBody } from "@/lib/adapters/http/body";
import { etagOf, ifNoneMatchHits, parseIfMatch, withExpectedVersion } from "@/lib/adapters/http/preconditions";
import { problemResponse } from "@/lib/adapters/http/problem";
import { queryOf } from "@/lib/adapters/http/query";
import { otherMethods, withProblems } from "@/lib/adapters/http/respond";

const url = "http://localhost/api/v1/tasks/t1/transitions";

function post(
  body: BodyInit | null,
  headers: Record<string, string> = { "Content-Type": "application/json" },
): Request {
  return new Request(url, {
    method: "POST",
    body,
    headers,
    ...(body instanceof ReadableStream ? { duplex: "half" } : {}),
  } as RequestInit);
}

async function caught(promise: Promise<unknown> | (() => unknown)): Promise<AppError> {
  try {
    await (typeof promise === "function" ? promise() : promise);
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
  throw new Error("expected an AppError");
}

describe("readJsonBody", () => {
  it("answers JSON nested 8,000 deep with a 400, not a 500, naming the member it is in (issue 11)", async () => {
    const deep = "[".repeat(8000) + "]".repeat(8000);
    const array = await caught(readJsonBody(post(deep), { maxBytes: 1 << 20 }));
    expect(array.code).toBe("validation_failed");
    expect(array.details.errors).toEqual([{ field: "", message: "nests deeper than 64 levels" }]);
    const event = `{"event_id":"e1","source":"crm","type":"x","payload":${'{"a":'.repeat(8000)}1${"}".repeat(8000)}}`;
    const member = await caught(readJsonBody(post(event), { maxBytes: 1 << 20 }));
    expect(member.details.errors).toEqual([{ field: "payload", message: "nests deeper than 64 levels" }]);
    expect(await readJsonBody(post(`{"a":${"[".repeat(63)}${"]".repeat(63)}}`), { maxBytes: 1024 })).toBeTruthy();
  });

  it("parses a JSON object", async () => {
    expect(await readJsonBody(post('{"a":1}'), { maxBytes: 1024 })).toEqual({ a: 1 });
  });

  it("accepts +json media types and a UTF-8 charset", async () => {
    expect(
      await readJsonBody(post("[1]", { "Content-Type": "application/merge-patch+json; charset=UTF-8" }), {
        maxBytes: 1024,
      }),
    ).toEqual([1]);
  });

  it.each([
    ["text/plain"],
    ["application/x-www-form-urlencoded"],
    ["application/json; charset=latin1"],
    ["application/jsonx"],
  ])("refuses %s with 415", async (type) => {
    const error = await caught(readJsonBody(post("{}", { "Content-Type": type }), { maxBytes: 1024 }));
    expect(error.code).toBe("unsupported_media_type");
  });

  it("refuses a missing Content-Type with 415", async () => {
    const error = await caught(
      readJsonBody(new Request(url, { method: "POST", body: new Uint8Array([123, 125]) }), { maxBytes: 1024 }),
    );
    expect(error.code).toBe("unsupported_media_type");
  });

  it('is a 400 on field "" for malformed JSON, an empty body and invalid UTF-8', async () => {
    for (const body of ['{"a":', "", new Uint8Array([0x7b, 0xff, 0x7d])]) {
      const error = await caught(readJsonBody(post(body), { maxBytes: 1024 }));
      expect(error.code).toBe("validation_failed");
      expect(error.details.errors?.map((e) => e.field)).toEqual([""]);
    }
  });

  it("is a 413 when Content-Length declares too much, before reading", async () => {
    const error = await caught(
      readJsonBody(post("{}", { "Content-Type": "application/json", "Content-Length": "5000" }), { maxBytes: 1024 }),
    );
    expect(error.code).toBe("payload_too_large");
    expect(error.details.maxBytes).toBe(1024);
  });

  it("is a 413 when a stream without Content-Length exceeds the limit, and stops reading", async () => {
    let pulled = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled++;
        controller.enqueue(new Uint8Array(400).fill(0x20));
        if (pulled > 100) controller.close();
      },
    });
    const error = await caught(readJsonBody(post(stream), { maxBytes: 1024 }));
    expect(error.code).toBe("payload_too_large");
    expect(pulled).toBeLessThan(10);
  });

  it("accepts a body of exactly the limit", async () => {
    const body = `"${"x".repeat(1022)}"`;
    expect(await readJsonBody(post(body), { maxBytes: 1024 })).toHaveLength(1022);
  });
});

describe("If-Match and ETags", () => {
  it('reads "5", 5 and W/"5"', () => {
    expect(parseIfMatch('"5"')).toBe(5);
    expect(parseIfMatch("5")).toBe(5);
    expect(parseIfMatch('W/"5"')).toBe(5);
    expect(parseIfMatch(' "12" ')).toBe(12);
    expect(parseIfMatch(null)).toBeUndefined();
    expect(parseIfMatch("")).toBeUndefined();
  });

  it.each([["*"], ['"1", "2"'], ['"abc"'], ['"0"'], ["-1"], ['"1.5"']])("refuses %s naming If-Match", async (value) => {
    const error = await caught(() => parseIfMatch(value));
    expect(error.details.errors?.map((e) => e.field)).toEqual(["If-Match"]);
  });

  it("fills expected_version from If-Match, and refuses a disagreement", async () => {
    expect(withExpectedVersion({ to: "X" }, 3)).toEqual({ to: "X", expected_version: 3 });
    expect(withExpectedVersion({ to: "X", expected_version: 3 }, 3)).toEqual({ to: "X", expected_version: 3 });
    expect(withExpectedVersion({ to: "X" }, undefined)).toEqual({ to: "X" });
    expect(withExpectedVersion([1], 3)).toEqual([1]);
    const error = await caught(() => withExpectedVersion({ expected_version: 4 }, 3));
    expect(error.details.errors?.map((e) => e.field)).toEqual(["expected_version"]);
  });

  it("matches If-None-Match against the version", () => {
    expect(etagOf(7)).toBe('"7"');
    expect(ifNoneMatchHits('"7"', 7)).toBe(true);
    expect(ifNoneMatchHits('W/"6", "7"', 7)).toBe(true);
    expect(ifNoneMatchHits("*", 7)).toBe(true);
    expect(ifNoneMatchHits('"6"', 7)).toBe(false);
    expect(ifNoneMatchHits(null, 7)).toBe(false);
  });
});

describe("bearer tokens", () => {
  it("reads the token, any case of the scheme", () => {
    expect(bearerTokenOf("Bearer vrt_abc")).toBe("vrt_abc");
    expect(bearerTokenOf("bearer   vrt_abc ")).toBe("vrt_abc");
  });

  it.each([[null], [""], ["Basic dXNlcjpwYXNz"], ["Bearer"], ["Bearer a b"], ["Bearer a,b"]])(
    "refuses %s with 401",
    async (header) => {
      expect((await caught(() => bearerTokenOf(header))).code).toBe("unauthenticated");
    },
  );

  it("is a 401 invalid_token for a token the lookup does not know", async () => {
    const request = new Request(url, { headers: { Authorization: "Bearer vrt_unknown" } });
    const error = await caught(authenticateBearer(request, async () => null));
    expect(error.code).toBe("unauthenticated");
    const res = problemResponse(error, request);
    expect(res.headers.get("WWW-Authenticate")).toBe('Bearer realm="verity", error="invalid_token"');
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).not.toHaveProperty("bearer_error");
    expect(JSON.stringify(body)).not.toContain("vrt_unknown");
  });
});

describe("problem responses", () => {
  it("maps an AppError to problem+json with snake_case extensions", async () => {
    const res = problemResponse(
      new AppError("version_conflict", "stale", { currentVersion: 4, currentStatus: "RUNNING" }),
      { method: "POST", url },
    );
    expect(res.status).toBe(409);
    expect(res.headers.get("Content-Type")).toBe("application/problem+json");
    expect(res.headers.get("ETag")).toBe('"4"');
    expect(await res.json()).toEqual({
      type: "https://verity.dev/problems/version-conflict",
      title: "It changed since you read it",
      status: 409,
      detail: "stale",
      instance: "/api/v1/tasks/t1/transitions",
      current_version: 4,
      current_status: "RUNNING",
    });
  });

  it("answers an unexpected error with a 500 that leaks nothing, and logs it without headers", async () => {
    // The logger (lib/config/log.ts) writes errors to stderr.
    const log = vi.spyOn(process.stderr, "write").mockImplementation(() => true);
    try {
      const handler = withProblems(async () => {
        throw new Error('relation "tasks" does not exist: SELECT secret_column');
      });
      const res = await handler(
        new Request(url, { method: "POST", headers: { Authorization: "Bearer vrt_secret_token" } }),
      );
      expect(res.status).toBe(500);
      const body = (await res.json()) as Record<string, unknown>;
      expect(body.type).toBe("https://verity.dev/problems/internal-error");
      expect(JSON.stringify(body)).not.toContain("secret_column");
      expect(typeof body.request_id).toBe("string");
      const logged = log.mock.calls.map((c) => String(c[0])).join("\n");
      expect(logged).toContain(String(body.request_id));
      expect(logged).toContain("unhandled error in API route");
      expect(logged).not.toContain("vrt_secret_token");
    } finally {
      log.mockRestore();
    }
  });

  it("answers an unserved method with a 405 problem and Allow", async () => {
    const res = await otherMethods(["GET", "POST"]).DELETE(new Request(url, { method: "DELETE" }));
    expect(res.status).toBe(405);
    expect(res.headers.get("Allow")).toBe("GET, POST");
    expect(res.headers.get("Content-Type")).toBe("application/problem+json");
  });
});

describe("queryOf", () => {
  it("returns the parameters, refusing repeats", async () => {
    expect(queryOf("http://x/a?limit=2&q=t")).toEqual({ limit: "2", q: "t" });
    const error = await caught(() => queryOf("http://x/a?limit=1&limit=2"));
    expect(error.details.errors?.map((e) => e.field)).toEqual(["limit"]);
  });
});
