import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isAppError } from "@/lib/core/errors";
import { createAgent } from "@/lib/use-cases/agents/create-agent";
import type { AuditActor } from "@/lib/model/audit/audit-chain";
import { createPostgresTestDatabase, type PostgresTestDatabase } from "@/tests/helpers/postgres";

/**
 * Eight admins create the same agent at once, on real PostgreSQL connections
 * (PGlite has one, so it cannot race): exactly one gets a token, the others
 * are told the name exists, and the identity has one token and one audit entry.
 */
const admin: AuditActor = { identity: "spiffe://verity.local/user/admin", kind: "user" };

let database: PostgresTestDatabase;
beforeAll(async () => {
  database = await createPostgresTestDatabase({ poolSize: 8 });
});
afterAll(async () => database?.drop());

describe("createAgent under concurrency", () => {
  it("one of eight concurrent creates of one name issues a token; the others are refused naming the field", async () => {
    const attempts = await Promise.allSettled(
      Array.from({ length: 8 }, () =>
        createAgent(
          database.db,
          {
            name: "racing-bot",
            scopes: { workflows: ["agent-task"], tools: [], take_over_leases: false },
            expires_at: null,
          },
          admin,
        ),
      ),
    );
    const issued = attempts.filter((a) => a.status === "fulfilled");
    const refused = attempts.flatMap((a) => (a.status === "rejected" ? [a.reason as unknown] : []));
    expect(issued).toHaveLength(1);
    expect(refused).toHaveLength(7);
    for (const error of refused) {
      expect(isAppError(error) && error.code).toBe("validation_failed");
      expect(isAppError(error) && error.details.errors).toEqual([{ field: "name", message: "exists already" }]);
    }
    const identity = "spiffe://verity.local/agent/racing-bot";
    expect(await database.db.apiToken.count({ where: { identity } })).toBe(1);
    expect(await database.db.auditEntry.count({ where: { action: "agent.token_issued" } })).toBe(1);
  });
});
