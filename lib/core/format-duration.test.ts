import { describe, expect, it } from "vitest";
import { formatDuration } from "@/lib/core/format-duration";

const second = 1000;
const minute = 60 * second;
const hour = 60 * minute;
const day = 24 * hour;

describe("formatDuration", () => {
  it("names seconds under a minute, minutes under an hour", () => {
    expect(formatDuration(0)).toBe("0 s");
    expect(formatDuration(45 * second)).toBe("45 s");
    expect(formatDuration(59 * second + 999)).toBe("59 s");
    expect(formatDuration(minute)).toBe("1 min");
    expect(formatDuration(12 * minute + 59 * second)).toBe("12 min");
  });

  it("adds the smaller unit only when it is not zero", () => {
    expect(formatDuration(3 * hour)).toBe("3 h");
    expect(formatDuration(3 * hour + 5 * minute)).toBe("3 h 5 min");
    expect(formatDuration(2 * day)).toBe("2 d");
    expect(formatDuration(2 * day + 4 * hour + 59 * minute)).toBe("2 d 4 h");
  });

  it("truncates every unit, so nothing reads as longer than it was", () => {
    expect(formatDuration(999)).toBe("0 s");
    expect(formatDuration(hour - 1)).toBe("59 min");
    expect(formatDuration(day - 1)).toBe("23 h 59 min");
  });

  it("reads a negative or impossible span as none", () => {
    expect(formatDuration(-5)).toBe("0 s");
    expect(formatDuration(Number.NaN)).toBe("0 s");
  });
});
