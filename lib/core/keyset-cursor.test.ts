import { describe, expect, it } from "vitest";
import { AppError } from "@/lib/core/errors";
import { keysetCursor, keysetParts } from "@/lib/core/keyset-cursor";

const byUpdated = keysetCursor([keysetParts.instant, keysetParts.text], {
  notOurs: "not a cursor of this list",
  advice: "start again from the first page",
});
const byStreamSeq = keysetCursor([keysetParts.instant, keysetParts.text, keysetParts.integer], {
  notOurs: "not a cursor returned by this search",
});

function refusalOf(decode: () => unknown): AppError {
  try {
    decode();
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
  throw new Error("decoded without a refusal");
}

describe("keyset cursors", () => {
  it("give back the key they were made from, Dates included", () => {
    const at = new Date("2026-11-30T12:34:56.789Z");
    const decoded = byUpdated.decode(byUpdated.encode([at, "exe_01k"]));
    expect(decoded).toEqual([at, "exe_01k"]);
    expect(decoded[0]).toBeInstanceOf(Date);
    expect(byStreamSeq.decode(byStreamSeq.encode([at, "task:t1", 42]))).toEqual([at, "task:t1", 42]);
  });

  it("are URL-safe and keep the wire format lists handed out before (base64url of a JSON array)", () => {
    const cursor = byUpdated.encode([new Date("2026-11-30T12:00:00.000Z"), "id/with+chars?"]);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(cursor).toBe(Buffer.from('["2026-11-30T12:00:00.000Z","id/with+chars?"]').toString("base64url"));
  });

  it.each([
    ["not base64 JSON", "%%%"],
    ["JSON but not an array", Buffer.from('{"at":1}').toString("base64url")],
    ["too few parts", Buffer.from('["2026-11-30T12:00:00.000Z"]').toString("base64url")],
    ["too many parts", Buffer.from('["2026-11-30T12:00:00.000Z","a","b"]').toString("base64url")],
    ["not an instant", Buffer.from('["yesterday","a"]').toString("base64url")],
    ["an empty id", Buffer.from('["2026-11-30T12:00:00.000Z",""]').toString("base64url")],
    ["empty", ""],
  ])("refuse %s as validation_failed on the cursor field, in words", (_what, cursor) => {
    const error = refusalOf(() => byUpdated.decode(cursor));
    expect(error.code).toBe("validation_failed");
    expect(error.message).toBe("cursor: not a cursor of this list; start again from the first page");
    expect(error.details.errors).toEqual([{ field: "cursor", message: "not a cursor of this list" }]);
  });

  it("refuse a cursor of another list whose key has another shape", () => {
    const other = byUpdated.encode([new Date(), "exe_1"]);
    const error = refusalOf(() => byStreamSeq.decode(other));
    expect(error.message).toBe("cursor: not a cursor returned by this search");
    expect(
      refusalOf(() => byStreamSeq.decode(Buffer.from('["2026-11-30T12:00:00.000Z","s",1.5]').toString("base64url")))
        .code,
    ).toBe("validation_failed");
  });
});
