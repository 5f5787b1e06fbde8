/**
 * `npm run -s verity -- keys …`: encryption at rest's keys (docs/encryption.md).
 * Recorded in the audit log as `system:cli`; never prints key material.
 *
 *   keys status [--json]   the tenant's data keys: version, key-encryption key, active, retired, destroyed
 *   keys rotate            a new data key for new values; the old ones keep opening what they sealed
 *   keys rotate-kek        a new key-encryption key at the key provider, every data key re-wrapped under it
 */
import { parseArgs } from "node:util";
import { getKeyProvider } from "@/lib/config/keyring";
import { listDataKeys, rotateDataKey, rotateKeyEncryptionKey } from "@/lib/stores/data-keys";
import { cliActor, commandTenantId, usageFailure, UsageError, withCliDatabase } from "@/programs/cli/cli-database";

const usage = `usage: npm run -s verity -- keys <command>
  status [--json]
  rotate
  rotate-kek`;

export async function runKeysCommand(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, allowPositionals: true, options: { json: { type: "boolean", default: false } } });
  } catch (error) {
    return usageFailure(error, usage);
  }
  const { values, positionals } = parsed;
  const tenantId = commandTenantId();
  switch (positionals[0]) {
    case "status":
      return withCliDatabase(async ({ db }) => {
        const keys = await listDataKeys(db, tenantId);
        if (values.json) {
          console.log(JSON.stringify({ tenant: tenantId, provider: getKeyProvider().name, keys }));
          return 0;
        }
        console.log(`tenant ${tenantId}, key provider: ${getKeyProvider().name}`);
        if (keys.length === 0) console.log("  no data key yet: one is made with the first sealed value");
        for (const k of keys) {
          const state = k.destroyedAt
            ? `destroyed ${k.destroyedAt.toISOString()}`
            : k.active
              ? "active"
              : `retired ${k.retiredAt?.toISOString()}`;
          console.log(`  v${k.version} ${k.id} wrapped by ${k.kekId}, ${state}`);
        }
        return 0;
      });
    case "rotate":
      return withCliDatabase(async ({ db }) => {
        const key = await rotateDataKey(db, tenantId, cliActor);
        console.log(
          `data key v${key.version} (${key.id}) now seals new values; older versions still open what they sealed`,
        );
        return 0;
      });
    case "rotate-kek":
      return withCliDatabase(async ({ db }) => {
        const { kekId, rewrapped } = await rotateKeyEncryptionKey(db, tenantId, cliActor);
        console.log(`key-encryption key ${kekId} now wraps ${rewrapped} data key(s); back up the keyring`);
        return 0;
      });
    default:
      return usageFailure(
        new UsageError(positionals[0] ? `unknown command "${positionals[0]}"` : "a command is required"),
        usage,
      );
  }
}
