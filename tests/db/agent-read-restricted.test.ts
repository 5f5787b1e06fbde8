/**
 * The read_restricted token scope: granted only by a person who may read
 * restricted fields themselves (the console's agent form and
 * `verity agents create --read-restricted --as` both go through createAgent),
 * refused in words otherwise with nothing created; the token it makes reads
 * restricted fields unmasked, one without it does not.
 */
import { describe, expect, it } from "vitest";
import { isAppError } from "@/lib/core/errors";
import { authenticateApiToken } from "@/lib/stores/api-tokens";
import { mayReadRestricted } from "@/lib/model/permissions";
import { createAgent } from "@/lib/use-cases/agents/create-agent";
import { useTestDatabase } from "@/tests/helpers/use-test-database";

const db = useTestDatabase();
const auditor = { identity: "spiffe://verity.local/user/auditor", kind: "user" } as const;
const admin = { identity: "spiffe://verity.local/user/admin", kind: "user" } as const;
const scopes = { workflows: "*" as const, tools: "*" as const, take_over_leases: false, read_restricted: true };

describe("granting read_restricted", () => {
  it("is refused in words to a grantor without data:restricted (and to one not named), and creates nothing", async () => {
    for (const grantor of [{ readsRestricted: false }, undefined]) {
      const error = await createAgent(
        db,
        { name: "replayer-refused", scopes, expires_at: null },
        auditor,
        grantor,
      ).then(
        () => null,
        (e: unknown) => e,
      );
      expect(isAppError(error) && error.code).toBe("forbidden");
      expect((error as Error).message).toContain("Only a person who may read restricted fields (data:restricted)");
    }
    expect(await db.apiToken.count({ where: { name: "replayer-refused" } })).toBe(0);
    expect(
      await db.auditEntry.count({
        where: { action: "agent.token_issued", subjectId: { contains: "replayer-refused" } },
      }),
    ).toBe(0);
  });

  it("is granted by a person who holds it; the token reads restricted fields, one without the scope does not", async () => {
    const granted = await createAgent(db, { name: "replayer", scopes, expires_at: null }, admin, {
      readsRestricted: true,
    });
    expect(granted.view.scopes.read_restricted).toBe(true);
    const plain = await createAgent(
      db,
      { name: "plain-worker", scopes: { ...scopes, read_restricted: false }, expires_at: null },
      auditor,
    );
    const replayer = await authenticateApiToken(db, granted.token);
    const worker = await authenticateApiToken(db, plain.token);
    expect(mayReadRestricted(replayer)).toBe(true);
    expect(mayReadRestricted(worker)).toBe(false);
  });
});
