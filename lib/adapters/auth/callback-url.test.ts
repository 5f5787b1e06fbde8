import { describe, expect, it } from "vitest";
import { sameOriginPath } from "@/lib/adapters/auth/callback-url";

describe("sameOriginPath", () => {
  it("keeps paths on this site, with their query and fragment", () => {
    expect(sameOriginPath("/tasks")).toBe("/tasks");
    expect(sameOriginPath("/tasks/t_1?tab=history#top")).toBe("/tasks/t_1?tab=history#top");
    expect(sameOriginPath("/tasks/%2F%2Fevil.example")).toBe("/tasks/%2F%2Fevil.example");
    expect(sameOriginPath("tasks")).toBe("/tasks");
    expect(sameOriginPath("https://verity.example/tasks?x=1", "https://verity.example")).toBe("/tasks?x=1");
  });

  it("sends everything that leaves the origin, or could, to /", () => {
    for (const value of [
      "/\t/evil.example",
      "/\t/evil.example/phish",
      "/\n/evil.example",
      "/\r/evil.example",
      "/\u0000/evil.example",
      "/\\evil.example",
      "\\\\evil.example",
      "//evil.example",
      "///evil.example",
      "https://evil.example/",
      "http://verity.example.evil.example/",
      "javascript:alert(1)",
      "data:text/html,hi",
      "https://verity.example:8443/tasks",
      "http://verity.example/tasks",
      "",
      "/".repeat(3000),
    ])
      expect(sameOriginPath(value, "https://verity.example"), JSON.stringify(value)).toBe("/");
    expect(sameOriginPath(undefined)).toBe("/");
    expect(sameOriginPath(["/tasks"])).toBe("/");
  });
});
