import { describe, expect, it } from "vitest";
import { withoutEmptyFields } from "@/lib/adapters/console/shared/clean-query";

describe("list addresses without empty fields", () => {
  it("drops empty and blank fields and keeps the rest in order", () => {
    expect(withoutEmptyFields("/tasks", { workflow: "", status: "RUNNING", q: " " })).toBe("/tasks?status=RUNNING");
    expect(withoutEmptyFields("/tasks", { workflow: "", status: "" })).toBe("/tasks");
    expect(withoutEmptyFields("/alerts", { kind: ["", "a"] })).toBe("/alerts?kind=a");
  });

  it("says nothing when the address is already clean", () => {
    expect(withoutEmptyFields("/tasks", { status: "RUNNING" })).toBeNull();
    expect(withoutEmptyFields("/tasks", {})).toBeNull();
  });
});
