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
 */
import { parseArgs } from "node:util";
import { listTenants, setTenantStatus } from "@/lib/stores/tenants";
import { openTenant } from "@/lib/use-cases/tenants/open-tenant";
import { deleteTenant } from "@/lib/use-cases/tenants/delete-tenant";
import { cliActor, requireArg, usageFailure, UsageError, withCliDatabase } from "@/programs/cli/cli-database";

const usage = `usage: npm run -s verity -- tenants <command>
  list [--json]
  create <id> --name <name>
  suspend <id> --reason <why>
  reactivate <id> --reason <why>
  delete <id> --reason <why>      destroys its keys: every sealed value, in backups too, unreadable for good`;

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
      default:
        throw new UsageError(positionals[0] ? `unknown command "${positionals[0]}"` : "a command is required");
    }
  } catch (error) {
    return usageFailure(error, usage);
  }
}
