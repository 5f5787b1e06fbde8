import { describe, expect, it } from "vitest";
import { useCliDataDir } from "@/tests/cli/cli-harness";

/**
 * `verity retention policy …`, `retention hold --tenant-wide` and
 * `verity tenants delete` as real processes on an embedded database: a
 * tenant's policy set and shown, a hold over everything refused unless asked
 * for by name, the tenant's deletion refused under its hold and done once the
 * hold is released, the register then saying what was destroyed.
 */
const { verity, withDatabase } = useCliDataDir("verity-tenant-retention-cli-");

describe("verity retention policy and tenants delete", () => {
  it("sets a tenant's policy, holds the tenant, and deletes it only once the hold is released", async () => {
    await verity("tenants", "create", "acme", "--name", "Acme Corp");
    expect(
      await verity("retention", "policy", "set", "--tenant", "acme", "--class", "confidential", "--days", "30"),
    ).toContain("tenant acme: confidential kept 30 days");
    expect(JSON.parse(await verity("retention", "policy", "show", "--tenant", "acme", "--json"))).toEqual({
      tenant: "acme",
      set: true,
      terms: { public: null, internal: null, confidential: 30, restricted: null },
    });
    await expect(
      verity("retention", "policy", "set", "--tenant", "acme", "--class", "secret", "--days", "3"),
    ).rejects.toMatchObject({
      code: 2,
      stderr: expect.stringContaining("--class must be one of public, internal, confidential, restricted"),
    });

    await expect(verity("retention", "hold", "--tenant", "acme", "--reason", "inquiry")).rejects.toMatchObject({
      code: 2,
      stderr: expect.stringContaining("a hold names --task, --from/--to, or --tenant-wide"),
    });
    const placed = await verity("retention", "hold", "--tenant", "acme", "--tenant-wide", "--reason", "inquiry");
    const holdId = /legal hold (\S+) placed/.exec(placed)?.[1];
    expect(await verity("retention", "holds", "--tenant", "acme")).toContain(`${holdId}  tenant-wide  "inquiry"`);
    expect(await verity("retention", "holds")).not.toContain(holdId!);

    await expect(verity("tenants", "delete", "acme", "--reason", "contract ended")).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringContaining(`under legal hold (${holdId})`),
    });
    await verity("retention", "release", holdId!, "--tenant", "acme", "--reason", "inquiry closed");
    const deleted = await verity("tenants", "delete", "acme", "--reason", "contract ended");
    expect(deleted).toContain("tenant acme deleted at");
    expect(deleted).toContain("unreadable from now on");

    await withDatabase(async (db) => {
      const rows = await db.$queryRaw<Array<{ status: string; reason: string }>>`
        SELECT status, deletion ->> 'reason' AS reason FROM tenants WHERE id = 'acme'`;
      // The first tenant's client sees only its own register entry (row-level security): none of acme's.
      expect(rows).toEqual([]);
    });
    const tenants = JSON.parse(await verity("tenants", "list", "--json")) as Array<{
      id: string;
      status: string;
      deletion: unknown;
    }>;
    expect(tenants.find((t) => t.id === "acme")).toMatchObject({
      status: "deleted",
      deletion: { reason: "contract ended" },
    });
  }, 600_000);
});
