-- Tenants and row-level security (docs/tenants.md).
--
-- Every row of a tenant's data carries its tenant_id, and PostgreSQL enforces
-- the boundary: the application's queries run as the role verity_app, which
-- is subject to one policy per table, "tenant_id = the transaction's
-- verity.tenant_id". A query that forgets its filter still reads and writes
-- only the tenant its connection was opened for; a row of another tenant can
-- be neither seen, inserted, moved nor deleted. tenant_id defaults to that
-- setting, so the stores never name it, and a connection with no tenant
-- (the setting unset or empty) reads nothing and writes nothing.
--
-- The table owner (the role that runs these migrations) is not subject to
-- the policies: it is the platform's connection (migrations, and the
-- lookups that find which tenant a sign-in or token belongs to).

CREATE TABLE "tenants" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'active',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "suspended_at" TIMESTAMPTZ(3),

    CONSTRAINT "tenants_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "tenants_id_format" CHECK ("id" ~ '^[a-z0-9][a-z0-9-]{0,62}$'),
    CONSTRAINT "tenants_status" CHECK ("status" IN ('active', 'suspended'))
);

-- Everything that exists today belongs to the first tenant.
INSERT INTO "tenants" ("id", "name") VALUES ('default', 'Default') ON CONFLICT ("id") DO NOTHING;

-- The application's role. NOLOGIN: a connection logs in as the owner and
-- takes this role for its whole life (node-postgres: the startup option
-- `-c role=verity_app`; the embedded database: SET ROLE before each
-- tenant's statements, lib/db/tenant-sessions.ts). Roles belong to the
-- server, not the database: a second database on the same server finds it.
DO $$
BEGIN
  CREATE ROLE verity_app NOLOGIN;
EXCEPTION WHEN duplicate_object OR unique_violation THEN
  NULL;
END
$$;

DO $$
BEGIN
  IF NOT pg_has_role(current_user, 'verity_app', 'MEMBER') THEN
    EXECUTE format('GRANT verity_app TO %I', current_user);
  END IF;
END
$$;

GRANT USAGE ON SCHEMA public TO verity_app;
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO verity_app;
GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO verity_app;
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO verity_app;
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE, SELECT ON SEQUENCES TO verity_app;
-- Migrations and the tenant register are the platform's.
REVOKE ALL ON "_prisma_migrations" FROM verity_app;
REVOKE ALL ON "tenants" FROM verity_app;
GRANT SELECT ON "tenants" TO verity_app;

-- The invariant monitor reads pg_stat_activity's transaction ids
-- (lib/use-cases/monitor/read-committed-forward.ts), which PostgreSQL shows
-- a role only for its own sessions unless it may read all statistics. A
-- server where the migrating role may not grant it keeps going; the monitor
-- then sees only its own role's sessions.
DO $$
BEGIN
  GRANT pg_read_all_stats TO verity_app;
EXCEPTION WHEN insufficient_privilege OR undefined_object THEN
  RAISE NOTICE 'verity_app was not granted pg_read_all_stats: %', SQLERRM;
END
$$;

-- The connection's tenant; NULL when it has none (unset, or reset to '').
CREATE FUNCTION verity_current_tenant() RETURNS text
  LANGUAGE sql STABLE
  AS $$ SELECT NULLIF(current_setting('verity.tenant_id', true), '') $$;

-- tenant_id on every table of a tenant's data, and its policy. The existing
-- rows are the first tenant's; new rows take the connection's tenant. A
-- setting that is unset or empty (the owner's connection, a tenant's setting
-- reset) gives NULL, which NOT NULL refuses: no row is written for no one.
DO $$
DECLARE
  t text;
BEGIN
  FOREACH t IN ARRAY ARRAY[
    'tasks', 'transitions', 'users', 'console_sessions', 'api_tokens', 'task_delegations',
    'executions', 'execution_events', 'leases', 'inbox_events', 'outbox_messages',
    'reviews', 'review_decisions', 'divergence_alerts', 'checkpoints', 'checkpoint_restores',
    'audit_entries', 'audit_streams', 'audit_anchors', 'audit_legal_holds', 'write_conflicts',
    'invariant_monitor_runs', 'task_instructions', 'workflow_versions', 'tool_versions',
    'effect_lookups', 'graph_threads', 'graph_checkpoints', 'graph_blobs', 'graph_writes'
  ] LOOP
    EXECUTE format('ALTER TABLE %I ADD COLUMN "tenant_id" TEXT NOT NULL DEFAULT %L', t, 'default');
    EXECUTE format('ALTER TABLE %I ALTER COLUMN "tenant_id" SET DEFAULT verity_current_tenant()', t);
  END LOOP;
END
$$;

ALTER TABLE "data_keys" ALTER COLUMN "tenant_id" SET DEFAULT verity_current_tenant();

-- The policy reads the setting once per statement (the sub-select), not per row.
DO $$
DECLARE
  t text;
BEGIN
  FOREACH t IN ARRAY ARRAY[
    'tasks', 'transitions', 'users', 'console_sessions', 'api_tokens', 'task_delegations',
    'executions', 'execution_events', 'leases', 'inbox_events', 'outbox_messages',
    'reviews', 'review_decisions', 'divergence_alerts', 'checkpoints', 'checkpoint_restores',
    'audit_entries', 'audit_streams', 'audit_anchors', 'audit_legal_holds', 'write_conflicts',
    'invariant_monitor_runs', 'task_instructions', 'workflow_versions', 'tool_versions',
    'effect_lookups', 'graph_threads', 'graph_checkpoints', 'graph_blobs', 'graph_writes',
    'data_keys'
  ] LOOP
    EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
    EXECUTE format(
      'CREATE POLICY tenant_isolation ON %I USING ("tenant_id" = (SELECT verity_current_tenant())) WITH CHECK ("tenant_id" = (SELECT verity_current_tenant()))',
      t);
  END LOOP;
END
$$;

-- A tenant reads its own entry in the register (its name, whether it is suspended).
ALTER TABLE "tenants" ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON "tenants" USING ("id" = (SELECT verity_current_tenant()));

-- (A primary key is replaced only while it is the old one, and each index on
-- its own statement, so that a start finding this migration unfinished can
-- re-run it to tell that it was applied: lib/db/migrate.ts.)
-- Keys a tenant chooses, or that two tenants arrive at alike, are unique per
-- tenant: the same audit stream name (each tenant's chain is its own), the
-- same built-in workflow (its digest) and tool version in every tenant.
DO $$
BEGIN
  IF (SELECT array_length(conkey, 1) FROM pg_constraint WHERE conrelid = '"audit_streams"'::regclass AND contype = 'p') = 1 THEN
    ALTER TABLE "audit_streams" DROP CONSTRAINT "audit_streams_pkey";
    ALTER TABLE "audit_streams" ADD CONSTRAINT "audit_streams_pkey" PRIMARY KEY ("tenant_id", "stream");
  END IF;
END
$$;
DO $$
BEGIN
  IF (SELECT array_length(conkey, 1) FROM pg_constraint WHERE conrelid = '"audit_anchors"'::regclass AND contype = 'p') = 1 THEN
    ALTER TABLE "audit_anchors" DROP CONSTRAINT "audit_anchors_pkey";
    ALTER TABLE "audit_anchors" ADD CONSTRAINT "audit_anchors_pkey" PRIMARY KEY ("tenant_id", "stream");
  END IF;
END
$$;
DROP INDEX "audit_entries_stream_seq_key";
CREATE UNIQUE INDEX "audit_entries_tenant_id_stream_seq_key" ON "audit_entries"("tenant_id", "stream", "seq");
DO $$
BEGIN
  IF (SELECT array_length(conkey, 1) FROM pg_constraint WHERE conrelid = '"workflow_versions"'::regclass AND contype = 'p') = 1 THEN
    ALTER TABLE "workflow_versions" DROP CONSTRAINT "workflow_versions_pkey";
    ALTER TABLE "workflow_versions" ADD CONSTRAINT "workflow_versions_pkey" PRIMARY KEY ("tenant_id", "digest");
  END IF;
END
$$;
DROP INDEX "workflow_versions_name_version_key";
CREATE UNIQUE INDEX "workflow_versions_tenant_id_name_version_key" ON "workflow_versions"("tenant_id", "name", "version");
DO $$
BEGIN
  IF (SELECT array_length(conkey, 1) FROM pg_constraint WHERE conrelid = '"tool_versions"'::regclass AND contype = 'p') = 1 THEN
    ALTER TABLE "tool_versions" DROP CONSTRAINT "tool_versions_pkey";
    ALTER TABLE "tool_versions" ADD CONSTRAINT "tool_versions_pkey" PRIMARY KEY ("tenant_id", "id");
  END IF;
END
$$;
DROP INDEX "tool_versions_name_version_key";
CREATE UNIQUE INDEX "tool_versions_tenant_id_name_version_key" ON "tool_versions"("tenant_id", "name", "version");

-- The chain trigger and the retention cut, as before, on the tenant's own
-- stream head and anchor (they run as the caller, so row-level security
-- keeps every read in them to the caller's tenant too).
CREATE OR REPLACE FUNCTION audit_entries_chain() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
BEGIN
  INSERT INTO audit_streams AS s (stream, last_seq, prev_hash, last_hash, updated_at)
  VALUES (NEW.stream, 1, repeat('0', 64), audit_chain_hash(repeat('0', 64), 1, NEW.content_digest), now())
  ON CONFLICT (tenant_id, stream) DO UPDATE
     SET last_seq = s.last_seq + 1,
         prev_hash = s.last_hash,
         last_hash = audit_chain_hash(s.last_hash, s.last_seq + 1, NEW.content_digest),
         updated_at = now()
  RETURNING s.last_seq, s.prev_hash, s.last_hash INTO NEW.seq, NEW.prev_hash, NEW.hash;
  RETURN NEW;
END
$$;

CREATE OR REPLACE FUNCTION audit_cut_stream(p_stream text, p_through_seq integer, p_cutoff timestamptz, p_entry_id text) RETURNS integer
  LANGUAGE plpgsql
  AS $$
DECLARE
  v_from integer;
  v_head integer;
  v_hash text;
  v_deleted integer;
BEGIN
  -- A hold placed concurrently either committed before this lock (and is
  -- seen below) or waits until this cut has committed.
  LOCK TABLE audit_legal_holds IN SHARE MODE;
  IF p_cutoff > now() THEN
    RAISE EXCEPTION 'audit retention: cutoff % is in the future', p_cutoff USING ERRCODE = 'restrict_violation';
  END IF;
  IF NOT EXISTS (SELECT 1 FROM audit_entries WHERE id = p_entry_id AND action = 'audit.retention_applied') THEN
    RAISE EXCEPTION 'audit retention: % is not an audit.retention_applied entry', p_entry_id USING ERRCODE = 'restrict_violation';
  END IF;
  SELECT coalesce((SELECT through_seq FROM audit_anchors WHERE stream = p_stream), 0) INTO v_from;
  SELECT last_seq INTO v_head FROM audit_streams WHERE stream = p_stream;
  IF v_head IS NULL OR p_through_seq <= v_from OR p_through_seq > v_head THEN
    RAISE EXCEPTION 'audit retention: stream % has no entries % to cut (anchor %, head %)', p_stream, p_through_seq, v_from, v_head
      USING ERRCODE = 'restrict_violation';
  END IF;
  IF EXISTS (SELECT 1 FROM audit_entries WHERE stream = p_stream AND seq <= p_through_seq AND at >= p_cutoff) THEN
    RAISE EXCEPTION 'audit retention: stream % has entries through seq % newer than %', p_stream, p_through_seq, p_cutoff
      USING ERRCODE = 'restrict_violation';
  END IF;
  IF EXISTS (SELECT 1 FROM audit_entries WHERE stream = p_stream AND seq <= p_through_seq AND audit_hold_covers(task_id, at)) THEN
    RAISE EXCEPTION 'audit retention: a legal hold covers entries of stream % through seq %', p_stream, p_through_seq
      USING ERRCODE = 'restrict_violation';
  END IF;
  SELECT hash INTO v_hash FROM audit_entries WHERE stream = p_stream AND seq = p_through_seq;
  IF v_hash IS NULL THEN
    RAISE EXCEPTION 'audit retention: stream % has no entry % (the chain is already broken)', p_stream, p_through_seq
      USING ERRCODE = 'restrict_violation';
  END IF;
  PERFORM set_config('verity.audit_retention', 'on', true);
  DELETE FROM audit_entries WHERE stream = p_stream AND seq <= p_through_seq;
  GET DIAGNOSTICS v_deleted = ROW_COUNT;
  INSERT INTO audit_anchors (stream, through_seq, hash, cut_at, entry_id)
  VALUES (p_stream, p_through_seq, v_hash, now(), p_entry_id)
  ON CONFLICT (tenant_id, stream) DO UPDATE
     SET through_seq = EXCLUDED.through_seq, hash = EXCLUDED.hash, cut_at = EXCLUDED.cut_at, entry_id = EXCLUDED.entry_id;
  PERFORM set_config('verity.audit_retention', 'off', true);
  RETURN v_deleted;
END
$$;
