import { afterEach, describe, expect, it, vi } from "vitest";
import { ConsoleRouteError, fetchConsoleJson, routeErrorOf } from "@/lib/adapters/console/shared/console-fetch";
import { AppError } from "@/lib/core/errors";
import { appErrorResponse, problemResponse } from "@/lib/adapters/http/problem";

function answering(response: Response) {
  const fetchMock = vi.fn(async () => response);
  vi.stubGlobal("fetch", fetchMock);
  return fetchMock;
}

afterEach(() => vi.unstubAllGlobals());

describe("reading the console routes' problems", () => {
  it("says a refusal in the problem's own words, with its status and type", async () => {
    const error = await routeErrorOf(
      appErrorResponse(
        new AppError("forbidden", "Your role (operator) does not include audit:read."),
        "/api/console/audit/verify",
      ),
    );
    expect(error).toBeInstanceOf(ConsoleRouteError);
    expect(error.message).toBe("Your role (operator) does not include audit:read.");
    expect(error.status).toBe(403);
    expect(error.type).toBe("https://verity.dev/problems/forbidden");
    expect(error.sessionEnded).toBe(false);
  });

  it("tells an ended session apart", async () => {
    const error = await routeErrorOf(
      appErrorResponse(new AppError("unauthenticated", "Your session has ended: sign in again.")),
    );
    expect(error.sessionEnded).toBe(true);
  });

  it("keeps validation-failed's field errors, each in words", async () => {
    const errors = [
      { field: "order", message: "Order: Invalid option" },
      { field: "to", message: "To: must be later than From" },
    ];
    const error = await routeErrorOf(
      appErrorResponse(
        new AppError("validation_failed", "Order: Invalid option To: must be later than From", { errors }),
      ),
    );
    expect(error.status).toBe(400);
    expect(error.fieldErrors).toEqual(errors);
  });

  it("says only what it knows of an answer that is not problem+json, or a problem without detail", async () => {
    const html = await routeErrorOf(
      new Response("<h1>Bad gateway</h1>", {
        status: 502,
        statusText: "Bad Gateway",
        headers: { "Content-Type": "text/html" },
      }),
    );
    expect(html.message).toBe("The server answered 502 Bad Gateway.");
    expect(html.type).toBeNull();
    const bare = await routeErrorOf(
      new Response("{not json", { status: 500, headers: { "Content-Type": "application/problem+json" } }),
    );
    expect(bare.message).toBe("The server answered 500.");
  });

  it("carries an unexpected failure's request id, never its cause", async () => {
    vi.spyOn(console, "error").mockImplementation(() => {});
    const error = await routeErrorOf(
      problemResponse(new Error("password=hunter2 in SQL"), { method: "GET", url: "http://x/api/console/dashboard" }),
    );
    expect(error.status).toBe(500);
    expect(error.message).toMatch(
      /^The server failed to handle this request\. Quote request id [0-9a-f-]{36} when reporting it\.$/,
    );
  });
});

describe("fetchConsoleJson", () => {
  it("asks for JSON, never from a cache, and gives back the body", async () => {
    const fetchMock = answering(Response.json({ token: "7" }));
    expect(await fetchConsoleJson<{ token: string }>("/api/console/tasks/t/version")).toEqual({ token: "7" });
    expect(fetchMock).toHaveBeenCalledWith("/api/console/tasks/t/version", {
      cache: "no-store",
      headers: { Accept: "application/json, application/problem+json" },
    });
  });

  it("throws the route's refusal", async () => {
    answering(appErrorResponse(new AppError("not_found", "Task t does not exist.")));
    await expect(fetchConsoleJson("/api/console/tasks/t/version")).rejects.toMatchObject({
      name: "ConsoleRouteError",
      status: 404,
      message: "Task t does not exist.",
    });
  });

  it("lets a network failure through as what it is", async () => {
    vi.stubGlobal("fetch", async () => {
      throw new TypeError("Failed to fetch");
    });
    await expect(fetchConsoleJson("/api/console/dashboard")).rejects.toThrow(TypeError);
  });
});
