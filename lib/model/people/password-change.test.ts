import { describe, expect, it } from "vitest";
import { PasswordChangeSchema, passwordChangeProblems } from "@/lib/model/people/password-change";

const problems = (current: string, next: string, confirm: string, username = "olga") =>
  passwordChangeProblems(
    PasswordChangeSchema.parse({ current_password: current, new_password: next, confirm_password: confirm }),
    username,
  );

describe("passwordChangeProblems", () => {
  it("accepts a new password that is neither the username nor the current one, typed twice alike", () => {
    expect(problems("old password 1", "new password 12", "new password 12")).toEqual([]);
  });
  it("names the field: the username (any case, spaces around), the current password, a confirmation that differs", () => {
    expect(problems("old password 1", " Olga-Petrova ", " Olga-Petrova ", "olga-petrova")).toEqual([
      { field: "new_password", message: "Must not be your username." },
    ]);
    expect(problems("same password 1", "same password 1", "same password 1")).toEqual([
      { field: "new_password", message: "Must differ from your current password." },
    ]);
    expect(problems("old password 1", "new password 12", "new password 13")).toEqual([
      { field: "confirm_password", message: "Does not match the new password: type it again." },
    ]);
  });
  it("leaves length to the schema, which names the field", () => {
    const parsed = PasswordChangeSchema.safeParse({
      current_password: "x",
      new_password: "short",
      confirm_password: "short",
    });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues.map((i) => i.path.join("."))).toEqual(["new_password"]);
  });
});
