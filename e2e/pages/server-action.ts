import type { APIRequestContext, APIResponse, Page } from "@playwright/test";

/** A server action call as the browser sent it: enough to send it again from another session. */
export interface CapturedAction {
  url: string;
  headers: Record<string, string>;
  body: Buffer;
}

/**
 * Runs `trigger` and captures the server action request it makes, without
 * letting it reach the server. Lets a test post the very same action as a
 * different user, the way a hand-crafted request would.
 */
export async function captureServerAction(page: Page, trigger: () => Promise<void>): Promise<CapturedAction> {
  let resolve!: (a: CapturedAction) => void;
  const captured = new Promise<CapturedAction>((r) => (resolve = r));
  await page.route("**/*", async (route) => {
    const request = route.request();
    const headers = await request.allHeaders();
    if (request.method() !== "POST" || !headers["next-action"]) return route.fallback();
    resolve({ url: request.url(), headers, body: request.postDataBuffer() ?? Buffer.alloc(0) });
    await route.abort();
  });
  await trigger();
  const action = await captured;
  await page.unrouteAll({ behavior: "ignoreErrors" });
  return action;
}

/** Sends a captured action with `request`'s own cookies (another signed-in user). */
export function replayServerAction(request: APIRequestContext, action: CapturedAction): Promise<APIResponse> {
  const headers = Object.fromEntries(
    Object.entries(action.headers).filter(([k]) =>
      ["next-action", "content-type", "accept", "next-router-state-tree", "origin"].includes(k.toLowerCase()),
    ),
  );
  return request.post(action.url, { headers, data: action.body });
}
