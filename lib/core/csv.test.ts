import { describe, expect, it } from "vitest";
import { csvCell, csvLine } from "@/lib/core/csv";

describe("CSV cells", () => {
  it("quotes commas, quotes and line breaks, and leaves plain text as it is", () => {
    expect(csvLine(["a", "b,c", 'say "hi"', "two\nlines"])).toBe('a,"b,c","say ""hi""","two\nlines"\n');
  });

  it("writes null as empty, objects as JSON, dates as ISO instants", () => {
    expect(csvLine([null, undefined, { a: 1 }, new Date("2026-01-02T03:04:05.000Z"), 7, false])).toBe(
      ',,"{""a"":1}",2026-01-02T03:04:05.000Z,7,false\n',
    );
  });

  it("neutralises a cell a spreadsheet would run as a formula", () => {
    for (const text of ["=1+1", "+1", "-1", "@SUM(A1)", "\tx", "'quoted"])
      expect(csvCell(text).startsWith("'")).toBe(true);
    expect(csvCell('=HYPERLINK("http://x")')).toBe('"\'=HYPERLINK(""http://x"")"');
  });
});
