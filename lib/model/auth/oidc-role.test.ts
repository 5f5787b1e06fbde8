import { describe, expect, it } from "vitest";
import { parseOidcRoleMap, roleFromClaims } from "@/lib/model/auth/oidc-role";

describe("single sign-on's role mapping", () => {
  const parsed = parseOidcRoleMap("verity-admins=admin, verity-ops=operator,auditors=auditor");
  if (!parsed.ok) throw new Error(parsed.reason);
  const map = parsed.map;

  it("maps a claim's value, or the first configured of several", () => {
    expect(roleFromClaims({ groups: ["staff", "verity-ops"] }, "groups", map)).toBe("operator");
    expect(roleFromClaims({ groups: ["verity-ops", "verity-admins"] }, "groups", map)).toBe("admin");
    expect(roleFromClaims({ role: "auditors" }, "role", map)).toBe("auditor");
  });

  it("refuses a person whose claim maps to nothing, or who has no such claim", () => {
    expect(roleFromClaims({ groups: ["staff"] }, "groups", map)).toBeNull();
    expect(roleFromClaims({}, "groups", map)).toBeNull();
    expect(roleFromClaims({ groups: [{ name: "verity-admins" }] }, "groups", map)).toBeNull();
  });

  it("says what is wrong with a map", () => {
    expect(parseOidcRoleMap("verity-admins=root")).toMatchObject({
      ok: false,
      reason: expect.stringContaining("root"),
    });
    expect(parseOidcRoleMap("admin")).toMatchObject({ ok: false });
  });
});
