-- 1. The switch of the live announcements (docs/live-updates.md, "Turning
-- announcements off"). A notifying transaction's commit is serialized by
-- PostgreSQL (a database-wide lock for its NOTIFY queue), which costs
-- concurrent writers 5-60% (docs/benchmarks.md). A deployment that wants no
-- live updates turns them off HERE, in the database, so the cost goes
-- where it arises: every announcing trigger reads this one row in the
-- writing transaction and, when it says off, calls no pg_notify at all.
--
-- One row for the whole database, not a setting per server: every server
-- writes through the same triggers, so only one place can decide, and a
-- change of it is itself announced (always, on or off) so that every
-- server's listener follows it at once: no page ever says "Live" while
-- nothing is announced. A server's VERITY_LIVE_UPDATES, when set, is
-- written here at its start (lib/db/notifications.ts). Transactional like
-- any row: a crash mid-change leaves the old value or the new, never half.
--
-- Its CREATE TABLE, without IF NOT EXISTS on purpose, fails as applied when
-- this migration runs again over itself (lib/db/migrate.ts).
CREATE TABLE "live_announcements" (
    "id" BOOLEAN NOT NULL DEFAULT true,
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "live_announcements_pkey" PRIMARY KEY ("id"),
    -- Exactly one row: its key can only be true.
    CONSTRAINT "live_announcements_one_row" CHECK ("id")
);
-- ON CONFLICT: when an interrupted start left this migration unfinished, the
-- applier confirms "applied" statement by statement (lib/db/migrate.ts
-- confirmApplied); a plain INSERT would fail there on the row it made, with a
-- unique violation that proves nothing, and refuse the start.
INSERT INTO "live_announcements" ("id", "enabled") VALUES (true, true) ON CONFLICT ("id") DO NOTHING;

-- The tenants' connections read the switch (their writes fire the
-- triggers); only the owner's connection, at a server's start, sets it.
REVOKE INSERT, UPDATE, DELETE ON "live_announcements" FROM verity_app;
GRANT SELECT ON "live_announcements" TO verity_app;

-- STABLE: read once per statement at most, a primary-key read of one row.
CREATE FUNCTION verity_announcing() RETURNS boolean LANGUAGE sql STABLE AS $$
  SELECT coalesce((SELECT "enabled" FROM "live_announcements" WHERE "id"), true)
$$;

CREATE OR REPLACE FUNCTION verity_announce_task() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT verity_announcing() THEN RETURN NULL; END IF;
  PERFORM pg_notify('verity_changes', json_build_object('t', NEW.tenant_id, 'k', 'task', 'id', NEW.id, 'v', NEW.version)::text);
  RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION verity_announce_execution() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT verity_announcing() THEN RETURN NULL; END IF;
  PERFORM pg_notify('verity_changes', json_build_object('t', NEW.tenant_id, 'k', 'execution', 'id', NEW.id, 'v', NEW.version, 'task', NEW.task_id)::text);
  RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION verity_announce_review() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT verity_announcing() THEN RETURN NULL; END IF;
  PERFORM pg_notify('verity_changes', json_build_object('t', NEW.tenant_id, 'k', 'review', 'id', NEW.id, 'v', NEW.version, 'task', NEW.task_id)::text);
  RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION verity_announce_alert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT verity_announcing() THEN RETURN NULL; END IF;
  PERFORM pg_notify('verity_changes', json_build_object('t', NEW.tenant_id, 'k', 'alert', 'id', NEW.id, 'v', NEW.version, 'task', NEW.task_id)::text);
  RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION verity_announce_checkpoint() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT verity_announcing() THEN RETURN NULL; END IF;
  PERFORM pg_notify('verity_changes', json_build_object('t', NEW.tenant_id, 'k', 'checkpoint', 'id', NEW.id, 'task', NEW.task_id)::text);
  RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION verity_announce_inbox_claim() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT verity_announcing() THEN RETURN NULL; END IF;
  PERFORM pg_notify('verity_changes', json_build_object('t', NEW.tenant_id, 'k', 'inbox_claim', 'id', NEW.item_key, 'v', NEW.version, 'task', NEW.task_id)::text);
  RETURN NULL;
END
$$;

-- A session's end stays announced with the switch off: it is rare (a
-- sign-out), costs nothing on the write path, and closes an open stream of
-- a signed-out person on every server at once whatever the switch says.

-- The switch's own change, announced whatever it says: the listeners hear
-- "off" as their last announcement and "on" as the first of the new ones.
CREATE FUNCTION verity_announce_switch() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('verity_changes', json_build_object('k', 'announcements', 'on', NEW.enabled)::text);
  RETURN NULL;
END
$$;

CREATE TRIGGER verity_announce_switch AFTER UPDATE OF "enabled" ON "live_announcements"
  FOR EACH ROW WHEN (OLD."enabled" IS DISTINCT FROM NEW."enabled") EXECUTE FUNCTION verity_announce_switch();

-- 2. The invariant monitor's claim, renewed while its pass runs
-- (lib/use-cases/monitor/run-monitor-pass.ts). A pass whose process died
-- (SIGKILL, a lost machine) held its tenant's monitor until a fixed 5
-- minutes passed; now a pass renews `heartbeat_at` every few seconds, and a
-- run whose heartbeat is older than the lease is taken over by the next
-- server that asks (about one monitor interval). Existing rows: their start.
ALTER TABLE "invariant_monitor_runs" ADD COLUMN "heartbeat_at" TIMESTAMPTZ(3);
UPDATE "invariant_monitor_runs" SET "heartbeat_at" = coalesce("finished_at", "started_at");
ALTER TABLE "invariant_monitor_runs" ALTER COLUMN "heartbeat_at" SET NOT NULL,
  ALTER COLUMN "heartbeat_at" SET DEFAULT CURRENT_TIMESTAMP;
