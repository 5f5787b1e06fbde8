import { permissionsByRole, type Role } from "@/lib/model/permissions";

/**
 * Single sign-on's role mapping, pure: the provider says who a person is and
 * which groups (or roles) they have in one claim; VERITY_OIDC_ROLE_MAP says
 * which Verity role each value means, `value=role` pairs separated by
 * commas. A person whose claim maps to nothing is refused, not given a
 * default role: access is granted by configuration, never by omission.
 * When several values map, the first in the configuration wins, so it is
 * written most privileged first.
 */

export type OidcRoleMap = ReadonlyArray<{ value: string; role: Role }>;

const roles = Object.keys(permissionsByRole) as Role[];

/** The map, or the reason it is invalid (for the configuration's error). */
export function parseOidcRoleMap(text: string): { ok: true; map: OidcRoleMap } | { ok: false; reason: string } {
  const map: Array<{ value: string; role: Role }> = [];
  for (const pair of text.split(",")) {
    const at = pair.lastIndexOf("=");
    const value = pair.slice(0, at).trim();
    const role = pair.slice(at + 1).trim() as Role;
    if (at <= 0 || !value) return { ok: false, reason: `"${pair.trim()}" is not value=role` };
    if (!roles.includes(role)) return { ok: false, reason: `"${role}" is not a role (${roles.join(", ")})` };
    map.push({ value, role });
  }
  return { ok: true, map };
}

export function roleFromClaims(claims: Record<string, unknown>, claim: string, map: OidcRoleMap): Role | null {
  const raw = claims[claim];
  const values = new Set((Array.isArray(raw) ? raw : [raw]).filter((v): v is string => typeof v === "string"));
  return map.find((entry) => values.has(entry.value))?.role ?? null;
}
