import { describe, expect, it } from "vitest";
import { jsonPreview } from "@/lib/adapters/console/shared/json-preview";

function nested(depth: number): Record<string, unknown> {
  let value: Record<string, unknown> = { a: 1 };
  for (let i = 1; i < depth; i++) value = { a: value };
  return value;
}

describe("jsonPreview", () => {
  it("prints small JSON whole, as JSON.stringify would with two spaces", () => {
    const value = { id: "re_1", amount: 750, items: [1, { b: null }], empty: {}, none: [] };
    expect(jsonPreview(value)).toEqual({ head: JSON.stringify(value, null, 2), rest: "", omitted: false });
    expect(jsonPreview("text").head).toBe('"text"');
    expect(jsonPreview(null).head).toBe("null");
  });

  it("keeps a page small for the 9 KB value nested 1,500 deep that made a task page 18 MB (issue 11)", () => {
    const preview = jsonPreview(nested(1500));
    expect(JSON.stringify(nested(1500), null, 2).length).toBeGreaterThan(2_000_000);
    expect(preview.head.length + preview.rest.length).toBeLessThan(3_000);
    expect(preview.omitted).toBe(true);
    expect(preview.head + preview.rest).toContain('"a": {…}');
  });

  it("shows the first part and keeps the rest for 'show more', cut at a line's end", () => {
    const value = Object.fromEntries(Array.from({ length: 400 }, (_, i) => [`key_${i}`, "x".repeat(20)]));
    const preview = jsonPreview(value, { maxChars: 1000 });
    expect(preview.head.length).toBeLessThanOrEqual(1000);
    expect(preview.head.endsWith(",")).toBe(true);
    expect(preview.head + preview.rest).toBe(JSON.stringify(value, null, 2));
    expect(preview.omitted).toBe(false);
  });

  it("stops at the total cap", () => {
    const preview = jsonPreview({ blob: "y".repeat(10_000) }, { maxChars: 100, maxTotalChars: 2_000 });
    expect(preview.head.length + preview.rest.length).toBe(2_000);
    expect(preview.omitted).toBe(true);
  });
});
