-- Platform administrators (docs/tenants.md): people who create, suspend and
-- reactivate tenants, besides whatever role they hold in their own tenant.
-- A flag on the person, not a role: a role is what a tenant's admin hands out
-- from their console, and no tenant's admin may make someone master of every
-- tenant. Only the CLI on the server's host (`verity tenants
-- grant-platform-admin`) and the first admin of the `default` tenant's setup
-- set it.
-- (Without IF NOT EXISTS on purpose: run again over itself the script fails as
-- applied, and lib/db/migrate.ts then confirms it statement by statement.)
ALTER TABLE "users" ADD COLUMN "platform_admin" BOOLEAN NOT NULL DEFAULT false;

-- A deployment that exists already keeps someone who can manage tenants: its
-- first enabled admin of `default`, unless a platform admin exists (a re-run
-- after an interrupted start changes nothing).
UPDATE "users" SET "platform_admin" = true
 WHERE "id" = (
         SELECT "id" FROM "users"
          WHERE "tenant_id" = 'default' AND "role" = 'admin' AND "disabled_at" IS NULL
          ORDER BY "created_at", "id"
          LIMIT 1)
   AND NOT EXISTS (SELECT 1 FROM "users" WHERE "platform_admin");
