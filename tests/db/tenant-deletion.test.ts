import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "@/lib/db/client";
import type { Actor } from "@/lib/model/actor";
import { isSealed } from "@/lib/core/envelope-encryption";
import { verifyAuditChains } from "@/lib/stores/audit-log";
import { forgetUnwrappedDataKeys, listDataKeys } from "@/lib/stores/data-keys";
import { openJson, openText } from "@/lib/stores/field-encryption";
import { getInstructionLedger, recordInstruction } from "@/lib/stores/instructions";
import { findTenant, setTenantStatus } from "@/lib/stores/tenants";
import { placeLegalHold, releaseLegalHold } from "@/lib/use-cases/audit/audit-retention";
import { getExecution } from "@/lib/stores/execution-store";
import { deleteTenant } from "@/lib/use-cases/tenants/delete-tenant";
import { openTenant } from "@/lib/use-cases/tenants/open-tenant";
import { alice, refund, refundExecution, runningTask } from "@/tests/helpers/effects";
import { openTestPglite, type TestDatabase } from "@/tests/helpers/pglite";

/**
 * Deleting a tenant by crypto-shredding, on the embedded database with a
 * keyring file: a tenant with an instruction and a refund is deleted; a copy
 * of its sealed rows and of its wrapped data keys taken before (a backup)
 * opens nothing after, even put back in the database; the register keeps a
 * deletion record saying what was destroyed; another tenant still reads its
 * own. Refused for the first tenant and while a legal hold is in force.
 */

const folder = mkdtempSync(path.join(tmpdir(), "verity-tenant-deletion-"));
// Read once by lib/config/env.ts, at its first use (after this line).
process.env.VERITY_KEYRING_FILE = path.join(folder, "keys", "keyring.json");

const platformAdmin: Actor = { identity: "system:cli", kind: "system" };

let t: TestDatabase;
let acme: Db;
beforeAll(async () => {
  t = await openTestPglite();
  await openTenant(t, { id: "acme", name: "Acme Corp" }, platformAdmin);
  acme = t.forTenant("acme");
});
afterAll(async () => {
  await t.close();
  rmSync(folder, { recursive: true, force: true });
});

interface Backup {
  instructions: Array<{ text: string }>;
  executions: Array<{ id: string; request: unknown }>;
  dataKeys: Array<{ id: string; wrapped_key: string }>;
}

async function backupOf(tenantId: string): Promise<Backup> {
  return {
    instructions: await t.sql("SELECT text FROM task_instructions WHERE tenant_id = $1", [tenantId]),
    executions: await t.sql("SELECT id, request FROM executions WHERE tenant_id = $1", [tenantId]),
    dataKeys: await t.sql("SELECT id, wrapped_key FROM data_keys WHERE tenant_id = $1", [tenantId]),
  };
}

describe("deleting a tenant", () => {
  const words = "Customer Ada Lovelace asked to refund order 7781";
  let acmeTask: string;
  let acmeExecution: string;
  let defaultTask: string;
  let backup: Backup;

  beforeAll(async () => {
    acmeTask = (await runningTask(acme)).id;
    await recordInstruction(
      acme,
      acmeTask,
      { topic: "refund", directive: "allow", text: words, expected_seq: 0 },
      alice,
    );
    acmeExecution = (await refundExecution(acme)).id;
    defaultTask = (await runningTask(t.db)).id;
    await recordInstruction(
      t.db,
      defaultTask,
      { topic: "refund", directive: "note", text: "kept", expected_seq: 0 },
      alice,
    );
    backup = await backupOf("acme");
    expect(backup.instructions.map((r) => isSealed(r.text))).toEqual([true]);
    expect(isSealed(backup.executions[0]!.request)).toBe(true);
    expect(backup.dataKeys).toHaveLength(1);
  });

  it("is refused for the first tenant, with words, and changes nothing", async () => {
    await expect(deleteTenant(t, { id: "default", reason: "test" }, platformAdmin)).rejects.toMatchObject({
      code: "forbidden",
      message: expect.stringContaining("cannot be deleted"),
    });
    await expect(deleteTenant(t, { id: "acme", reason: "  " }, platformAdmin)).rejects.toMatchObject({
      code: "validation_failed",
    });
    expect((await findTenant(t.platformDb, "default"))?.status).toBe("active");
  });

  it("is refused while a legal hold of the tenant is in force, and nothing is destroyed", async () => {
    const hold = await placeLegalHold(acme, { reason: "litigation 12" }, alice);
    await expect(deleteTenant(t, { id: "acme", reason: "contract ended" }, platformAdmin)).rejects.toMatchObject({
      code: "invariant_violated",
      message: expect.stringContaining(`under legal hold (${hold.id})`),
    });
    expect((await findTenant(t.platformDb, "acme"))?.status).toBe("active");
    expect((await listDataKeys(acme, "acme")).every((k) => k.destroyedAt === null)).toBe(true);
    expect((await getInstructionLedger(acme, acmeTask)).items[0]?.text).toBe(words);
    await releaseLegalHold(acme, hold.id, "settled", alice);
  });

  it("destroys its keys: its sealed values, and a backup of them, never open again; the record says what went", async () => {
    const { tenant, record } = await deleteTenant(t, { id: "acme", reason: "contract ended" }, platformAdmin);
    expect(tenant).toMatchObject({ id: "acme", status: "deleted" });
    expect(record.data_keys).toEqual([{ id: backup.dataKeys[0]!.id, version: 1, kek_id: "kek-acme-1" }]);
    expect(record.rows_left).toMatchObject({ tasks: 2, task_instructions: 1, executions: 1 });
    expect(record.sealed_values).toContain("every backup");

    // The register keeps the record (it outlives the keys); the tenant's chain says so too, and still verifies.
    const stored = await findTenant(t.platformDb, "acme");
    expect(stored).toMatchObject({
      status: "deleted",
      deletion: { reason: "contract ended", data_keys: record.data_keys },
    });
    expect(stored?.deleted_at).not.toBeNull();
    const chain = await t.sql<{ action: string }>(
      "SELECT action FROM audit_entries WHERE tenant_id = 'acme' AND subject_type IN ('tenant', 'data_keys') ORDER BY at, seq",
    );
    expect(chain.map((e) => e.action)).toEqual([
      "tenant.created",
      "keys.data_key_created",
      "tenant.suspended",
      "keys.destroyed",
      "tenant.deleted",
    ]);
    expect((await verifyAuditChains(acme)).ok).toBe(true);

    // As a new process: the tenant's values do not open.
    forgetUnwrappedDataKeys();
    await expect(getInstructionLedger(acme, acmeTask)).rejects.toMatchObject({ code: "key_unavailable" });
    expect((await getExecution(acme, acmeExecution))?.request).toEqual(
      expect.stringContaining("[sealed value, unreadable: "),
    );

    // The backup: its wrapped key put back in the database, its sealed values read — the key-encryption key is gone.
    for (const key of backup.dataKeys)
      await t.sql("UPDATE data_keys SET wrapped_key = $2, destroyed_at = NULL WHERE id = $1", [
        key.id,
        key.wrapped_key,
      ]);
    forgetUnwrappedDataKeys();
    await expect(openText(acme, backup.instructions[0]!.text)).rejects.toMatchObject({
      code: "key_unavailable",
      message: expect.stringContaining("were destroyed"),
    });
    await expect(openJson(acme, backup.executions[0]!.request)).rejects.toMatchObject({ code: "key_unavailable" });

    // Never again: no reactivation, no second deletion.
    await expect(setTenantStatus(t.platformDb, "acme", "active", "oops", platformAdmin)).rejects.toMatchObject({
      code: "version_conflict",
    });
    await expect(deleteTenant(t, { id: "acme", reason: "again" }, platformAdmin)).rejects.toMatchObject({
      code: "version_conflict",
    });
  });

  it("leaves another tenant untouched: it still reads its own sealed values and its chain verifies", async () => {
    forgetUnwrappedDataKeys();
    expect((await getInstructionLedger(t.db, defaultTask)).items[0]?.text).toBe("kept");
    expect((await listDataKeys(t.db, "default")).every((k) => k.destroyedAt === null)).toBe(true);
    expect((await findTenant(t.platformDb, "default"))?.status).toBe("active");
    expect((await verifyAuditChains(t.db)).ok).toBe(true);
    expect(refund.customer_id).toBe("cus_1");
  });
});
