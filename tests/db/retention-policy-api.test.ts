import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { issueApiToken } from "@/lib/stores/api-tokens";
import { openTenant } from "@/lib/use-cases/tenants/open-tenant";
import * as policiesRoute from "@/app/api/v1/retention/policies/route";
import * as policyRoute from "@/app/api/v1/retention/policies/[class]/route";
import { getOpenApiDocument } from "@/lib/adapters/openapi/openapi-document";
import type { Role } from "@/lib/model/permissions";
import { openTestPglite, type TestDatabase } from "@/tests/helpers/pglite";
import { callRoute, serveRoutesFrom } from "@/tests/helpers/route-call";

/**
 * A tenant's retention policy through the real route handlers: read by
 * audit:read, changed by audit:retention only, each change a
 * compare-and-swap on the class's version and audited; bad input is a
 * problem naming the field with nothing changed; each tenant reads and
 * changes its own.
 */
let t: TestDatabase;
const tokens = {} as Record<"admin" | "auditor" | "agent" | "acmeAdmin", string>;
const system = { identity: "system:test", kind: "system" } as const;

beforeAll(async () => {
  t = await openTestPglite();
  serveRoutesFrom(t);
  await openTenant(t, { id: "acme", name: "Acme" }, system);
  const token = async (tenantId: string, name: string, role: Role) =>
    (await issueApiToken(t.forTenant(tenantId), { name, identity: `spiffe://verity.local/user/${name}`, role }, system))
      .token;
  tokens.admin = await token("default", "home-admin", "admin");
  tokens.auditor = await token("default", "home-auditor", "auditor");
  tokens.agent = await token("default", "home-agent", "agent");
  tokens.acmeAdmin = await token("acme", "acme-admin", "admin");
});
afterAll(async () => {
  serveRoutesFrom(undefined);
  await t?.close();
});

const path = (c: string) => `/api/v1/retention/policies/${c}`;
const put = (token: string, c: string, body: unknown, headers: Record<string, string> = {}) =>
  callRoute(policyRoute.PUT, "PUT", path(c), { token, body, params: { class: c }, headers });
const get = (token: string, c: string) => callRoute(policyRoute.GET, "GET", path(c), { token, params: { class: c } });
const policySetEntries = async (tenantId = "default") =>
  t.sql<{ actor: string; details: Record<string, unknown> }>(
    "SELECT actor, details FROM audit_entries WHERE action = 'retention.policy_set' AND tenant_id = $1 ORDER BY at, seq",
    [tenantId],
  );
const fieldsOf = (body: Record<string, unknown>) => (body.errors as Array<{ field: string }>).map((e) => e.field);

describe("GET /api/v1/retention/policies", () => {
  it("lists every class, each never set at version 0 and kept forever; an auditor may read it", async () => {
    const list = await callRoute(policiesRoute.GET, "GET", "/api/v1/retention/policies", { token: tokens.auditor });
    expect(list.status).toBe(200);
    expect(list.body).toEqual({
      is_set: false,
      items: ["public", "internal", "confidential", "restricted"].map((c) => ({
        data_class: c,
        keep_days: null,
        version: 0,
        updated_by: null,
        updated_at: null,
      })),
    });
  });
});

describe("PUT /api/v1/retention/policies/{class}", () => {
  it("refuses bad input with a problem naming the field, and changes nothing", async () => {
    const cases: Array<[unknown, Record<string, string>, string]> = [
      [{ keep_days: 30 }, {}, "expected_version"],
      [{ keep_days: 0, expected_version: 0 }, {}, "keep_days"],
      [{ keep_days: "thirty", expected_version: 0 }, {}, "keep_days"],
      [{ keep_days: 30, expected_version: 0, data_class: "public" }, {}, ""],
      [{ keep_days: 30, expected_version: 2 }, { "If-Match": '"3"' }, "expected_version"],
      [{ keep_days: 30 }, { "If-Match": "*" }, "If-Match"],
    ];
    for (const [body, headers, field] of cases) {
      const res = await put(tokens.admin, "restricted", body, headers);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.type).toBeDefined();
      expect(fieldsOf(res.body).join(" "), JSON.stringify(body)).toContain(field);
    }
    const unknown = await put(tokens.admin, "secret", { keep_days: 30, expected_version: 0 });
    expect(unknown.status).toBe(404);
    expect(unknown.body.detail).toContain('no data class "secret"');
    expect(await policySetEntries()).toHaveLength(0);
    expect((await get(tokens.admin, "restricted")).body).toMatchObject({ keep_days: null, version: 0 });
  });

  it("sets, changes and clears a term under compare-and-swap; each change audited with the term it replaced", async () => {
    const first = await put(tokens.admin, "restricted", { keep_days: 30, expected_version: 0 });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({
      data_class: "restricted",
      keep_days: 30,
      version: 1,
      updated_by: "spiffe://verity.local/user/home-admin",
    });

    const changed = await put(tokens.admin, "restricted", { keep_days: 60 }, { "If-Match": '"1"' });
    expect(changed.body).toMatchObject({ keep_days: 60, version: 2 });

    // Someone read version 1 and writes on it: refused, nothing changed.
    const stale = await put(tokens.admin, "restricted", { keep_days: 7, expected_version: 1 });
    expect(stale.status).toBe(409);
    expect(stale.body.detail).toContain("version 2 (60 days), not 1");
    expect((await get(tokens.admin, "restricted")).body).toMatchObject({ keep_days: 60, version: 2 });

    const cleared = await put(tokens.admin, "restricted", { keep_days: null, expected_version: 2 });
    expect(cleared.body).toMatchObject({ keep_days: null, version: 3 });
    // A cleared class keeps counting: version 1 from before cannot be replayed onto it.
    expect((await put(tokens.admin, "restricted", { keep_days: 5, expected_version: 1 })).status).toBe(409);

    expect((await policySetEntries()).map((e) => e.details)).toEqual([
      { data_class: "restricted", keep_days: 30, previous_keep_days: null, version: 1 },
      { data_class: "restricted", keep_days: 60, previous_keep_days: 30, version: 2 },
      { data_class: "restricted", keep_days: null, previous_keep_days: 60, version: 3 },
    ]);
    expect(new Set((await policySetEntries()).map((e) => e.actor))).toEqual(
      new Set(["spiffe://verity.local/user/home-admin"]),
    );
    const list = await callRoute(policiesRoute.GET, "GET", "/api/v1/retention/policies", { token: tokens.admin });
    expect(list.body.is_set).toBe(false);
  });

  it("only audit:retention may change it: an auditor and an agent are refused, nothing changed", async () => {
    for (const token of [tokens.auditor, tokens.agent]) {
      const res = await put(token, "public", { keep_days: 10, expected_version: 0 });
      expect(res.status).toBe(403);
    }
    expect((await get(tokens.agent, "public")).status).toBe(403);
    expect((await get(tokens.admin, "public")).body).toMatchObject({ keep_days: null, version: 0 });
  });

  it("each tenant reads and changes its own policy", async () => {
    await put(tokens.admin, "internal", { keep_days: 90, expected_version: 0 });
    expect((await get(tokens.acmeAdmin, "internal")).body).toMatchObject({ keep_days: null, version: 0 });
    const acme = await put(tokens.acmeAdmin, "internal", { keep_days: 400, expected_version: 0 });
    expect(acme.body).toMatchObject({ keep_days: 400, version: 1 });
    expect((await get(tokens.admin, "internal")).body).toMatchObject({ keep_days: 90, version: 1 });
    expect((await policySetEntries("acme")).map((e) => e.details.keep_days)).toEqual([400]);
  });

  it("is in the OpenAPI document", () => {
    const doc = getOpenApiDocument() as { paths: Record<string, Record<string, unknown>> };
    expect(Object.keys(doc.paths["/api/v1/retention/policies/{class}"] ?? {}).sort()).toEqual(["get", "put"]);
    expect(doc.paths["/api/v1/retention/policies"]?.get).toBeDefined();
  });
});
