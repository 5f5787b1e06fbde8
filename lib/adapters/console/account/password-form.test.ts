import { describe, expect, it } from "vitest";
import { AppError } from "@/lib/core/errors";
import { passwordFormError } from "@/lib/adapters/console/account/password-form";

describe("passwordFormError", () => {
  it("puts each named field's words under its box and says nothing changed", () => {
    const error = new AppError("validation_failed", "current_password: Is not your current password.", {
      errors: [{ field: "current_password", message: "Is not your current password." }],
    });
    expect(passwordFormError(error)).toEqual({
      status: "error",
      message: "Nothing was changed: see the fields marked below.",
      fields: { current_password: "Is not your current password." },
    });
  });
  it("keeps a message about no field whole, and ignores fields the form does not have", () => {
    const error = new AppError("forbidden", "You sign in through single sign-on.", {
      errors: [{ field: "username", message: "x" }],
    });
    expect(passwordFormError(error)).toEqual({
      status: "error",
      message: "You sign in through single sign-on. Nothing was changed.",
      fields: {},
    });
  });
});
