import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { sleep } from "@/lib/core/sleep";

/** Whether the promise has settled, after letting pending callbacks run. */
async function settled<T>(promise: Promise<T>): Promise<{ done: boolean; value?: T }> {
  let state: { done: boolean; value?: T } = { done: false };
  void promise.then((value) => (state = { done: true, value }));
  await vi.advanceTimersByTimeAsync(0);
  return state;
}

describe("sleep", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("waits the whole time, not less, and says it did", async () => {
    const wait = sleep(1000);
    await vi.advanceTimersByTimeAsync(999);
    expect(await settled(wait)).toEqual({ done: false });
    await vi.advanceTimersByTimeAsync(1);
    expect(await settled(wait)).toEqual({ done: true, value: true });
  });

  it("ends early when its signal aborts, saying the wait was cut short, and leaves no timer behind", async () => {
    const controller = new AbortController();
    const wait = sleep(60_000, controller.signal);
    expect(vi.getTimerCount()).toBe(1);
    controller.abort();
    expect(await settled(wait)).toEqual({ done: true, value: false });
    expect(vi.getTimerCount()).toBe(0);
  });

  it("does not wait at all on a signal already aborted, nor for no time", async () => {
    expect(await settled(sleep(60_000, AbortSignal.abort()))).toEqual({ done: true, value: false });
    expect(await settled(sleep(0))).toEqual({ done: true, value: true });
    expect(await settled(sleep(-5))).toEqual({ done: true, value: true });
    expect(vi.getTimerCount()).toBe(0);
  });

  it("stops listening to the signal once the wait is over", async () => {
    const controller = new AbortController();
    const remove = vi.spyOn(controller.signal, "removeEventListener");
    const wait = sleep(10, controller.signal);
    await vi.advanceTimersByTimeAsync(10);
    expect(await wait).toBe(true);
    expect(remove).toHaveBeenCalledWith("abort", expect.any(Function));
    controller.abort();
    expect(await wait).toBe(true);
  });
});
