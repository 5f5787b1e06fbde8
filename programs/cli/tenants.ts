/**
 * `npm run -s verity -- tenants …`: the platform's register of tenants
 * (docs/tenants.md), run on the server's host with the owner's connection.
 * Each change is recorded in the tenant's own audit chain as `system:cli`.
 *
 *   tenants list [--json]
 *   tenants create <id> --name <name>             a tenant with the built-in workflows and tools
 *   tenants suspend <id> --reason <why>           its people and agents refused, its background work stopped
 *   tenants reactivate <id> --reason <why>
 *   tenants delete <id> --reason <why>            crypto-shredding: its keys destroyed, its sealed data unreadable for good
 *   tenants grant-platform-admin <username>       may create, suspend and reactivate tenants (/platform/tenants)
 *   tenants revoke-platform-admin <username>
 *
 * Platform admin is granted here and nowhere else: the console's people
 * management is a tenant admin's, and cannot reach it (docs/tenants.md).
 */
import { parseArgs } from "node:util";
import { listTenants, setTenantStatus } from "@/lib/stores/tenants";
import { openTenant } from "@/lib/use-cases/tenants/open-tenant";
import { deleteTenant } from "@/lib/use-cases/tenants/delete-tenant";
import { setPlatformAdmin } from "@/lib/use-cases/tenants/set-platform-admin";
import { cliActor, requireArg, usageFailure, UsageError, withCliDatabase } from "@/programs/cli/cli-database";

const usage = `usage: npm run -s verity -- tenants <command>
  list [--json]
  create <id> --name <name>
  suspend <id> --reason <why>
  reactivate <id> --reason <why>
  delete <id> --reason <why>      destroys its keys: every sealed value, in backups too, unreadable for good
  grant-platform-admin <username>
  revoke-platform-admin <username>`;

export async function runTenantsCommand(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        json: { type: "boolean", default: false },
        name: { type: "string" },
        reason: { type: "string" },
      },
    });
  } catch (error) {
    return usageFailure(error, usage);
  }
  const { values, positionals } = parsed;
  try {
    switch (positionals[0]) {
      case "list":
        return await withCliDatabase(async ({ platformDb }) => {
          const tenants = await listTenants(platformDb);
          if (values.json) console.log(JSON.stringify(tenants));
          else for (const t of tenants) console.log(`${t.id}\t${t.status}\t${t.name}`);
          return 0;
        });
      case "create": {
        const id = requireArg(positionals[1], "tenant id");
        const name = requireArg(values.name, "--name");
        return await withCliDatabase(async (handle) => {
          const tenant = await openTenant(handle, { id, name }, cliActor);
          console.log(`tenant ${tenant.id} (${tenant.name}) created, with the built-in workflows and tools`);
          return 0;
        });
      }
      case "suspend":
      case "reactivate": {
        const id = requireArg(positionals[1], "tenant id");
        const reason = requireArg(values.reason, "--reason");
        const status = positionals[0] === "suspend" ? "suspended" : "active";
        return await withCliDatabase(async ({ platformDb }) => {
          const tenant = await setTenantStatus(platformDb, id, status, reason, cliActor);
          console.log(`tenant ${tenant.id} is ${tenant.status}`);
          return 0;
        });
      }
      case "delete": {
        const id = requireArg(positionals[1], "tenant id");
        const reason = requireArg(values.reason, "--reason");
        return await withCliDatabase(async (handle) => {
          const { tenant, record } = await deleteTenant(handle, { id, reason }, cliActor);
          if (values.json) {
            console.log(JSON.stringify(tenant));
            return 0;
          }
          const rows = Object.values(record.rows_left).reduce((n, c) => n + c, 0);
          console.log(`tenant ${tenant.id} deleted at ${tenant.deleted_at}`);
          console.log(
            `  data keys destroyed: ${record.data_keys.map((k) => `${k.id} (v${k.version}, ${k.kek_id})`).join(", ") || "none had been made"}`,
          );
          console.log(
            `  ${rows} row(s) in ${Object.keys(record.rows_left).length} table(s) stay, sealed values unreadable`,
          );
          console.log(`  ${record.sealed_values}`);
          return 0;
        });
      }
      case "grant-platform-admin":
      case "revoke-platform-admin": {
        const username = requireArg(positionals[1], "username");
        const granted = positionals[0] === "grant-platform-admin";
        return await withCliDatabase(async ({ platformDb }) => {
          const result = await setPlatformAdmin(platformDb, username, granted, cliActor);
          const now = granted ? "is a platform admin" : "is no longer a platform admin";
          console.log(`${result.username} (tenant ${result.tenantId}) ${now}${result.changed ? "" : " (already so)"}`);
          return 0;
        });
      }
      default:
        throw new UsageError(positionals[0] ? `unknown command "${positionals[0]}"` : "a command is required");
    }
  } catch (error) {
    return usageFailure(error, usage);
  }
}
