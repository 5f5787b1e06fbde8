-- Live updates (docs/live-updates.md): every change the console shows is
-- announced on the channel `verity_changes` by the transaction that makes
-- it. A trigger calls pg_notify inside the writing transaction, so the
-- announcement is delivered exactly when that transaction commits and never
-- for one that rolls back, and no writer (the task CAS statement on the
-- transition hot path, the reviews, alerts, executions and inbox stores, a
-- restore, retention) can forget it. The payload says only which row moved:
-- the tenant, the kind, the row's id, its version where it has one and the
-- task it belongs to. Never the row's data: every listener of the database
-- receives every tenant's announcements, and the server hands each person
-- only their own tenant's (lib/model/live/change-events.ts).
--
-- PostgreSQL folds identical payloads of one transaction into one
-- announcement. The functions' CREATE, without OR REPLACE on purpose, fails
-- as applied when this migration runs again over itself after an
-- interrupted start (lib/db/migrate.ts).

CREATE FUNCTION verity_announce_task() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('verity_changes', json_build_object('t', NEW.tenant_id, 'k', 'task', 'id', NEW.id, 'v', NEW.version)::text);
  RETURN NULL;
END
$$;

CREATE FUNCTION verity_announce_execution() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('verity_changes', json_build_object('t', NEW.tenant_id, 'k', 'execution', 'id', NEW.id, 'v', NEW.version, 'task', NEW.task_id)::text);
  RETURN NULL;
END
$$;

CREATE FUNCTION verity_announce_review() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('verity_changes', json_build_object('t', NEW.tenant_id, 'k', 'review', 'id', NEW.id, 'v', NEW.version, 'task', NEW.task_id)::text);
  RETURN NULL;
END
$$;

CREATE FUNCTION verity_announce_alert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('verity_changes', json_build_object('t', NEW.tenant_id, 'k', 'alert', 'id', NEW.id, 'v', NEW.version, 'task', NEW.task_id)::text);
  RETURN NULL;
END
$$;

-- A checkpoint and a restore attempt (applied or refused) both move a task's checkpoint pages.
CREATE FUNCTION verity_announce_checkpoint() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('verity_changes', json_build_object('t', NEW.tenant_id, 'k', 'checkpoint', 'id', NEW.id, 'task', NEW.task_id)::text);
  RETURN NULL;
END
$$;

-- A claim's row is its item's key; a released claim keeps its row (version counting on).
CREATE FUNCTION verity_announce_inbox_claim() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('verity_changes', json_build_object('t', NEW.tenant_id, 'k', 'inbox_claim', 'id', NEW.item_key, 'v', NEW.version, 'task', NEW.task_id)::text);
  RETURN NULL;
END
$$;

CREATE TRIGGER verity_announce AFTER INSERT OR UPDATE ON "tasks"
  FOR EACH ROW EXECUTE FUNCTION verity_announce_task();

-- An execution is announced when it appears and when its status moves, not for its other writes (a lease token, evidence).
CREATE TRIGGER verity_announce AFTER INSERT ON "executions"
  FOR EACH ROW EXECUTE FUNCTION verity_announce_execution();
CREATE TRIGGER verity_announce_status AFTER UPDATE OF "status" ON "executions"
  FOR EACH ROW WHEN (OLD."status" IS DISTINCT FROM NEW."status") EXECUTE FUNCTION verity_announce_execution();

CREATE TRIGGER verity_announce AFTER INSERT OR UPDATE ON "reviews"
  FOR EACH ROW EXECUTE FUNCTION verity_announce_review();

CREATE TRIGGER verity_announce AFTER INSERT OR UPDATE ON "divergence_alerts"
  FOR EACH ROW EXECUTE FUNCTION verity_announce_alert();

CREATE TRIGGER verity_announce AFTER INSERT ON "checkpoints"
  FOR EACH ROW EXECUTE FUNCTION verity_announce_checkpoint();
CREATE TRIGGER verity_announce AFTER INSERT ON "checkpoint_restores"
  FOR EACH ROW EXECUTE FUNCTION verity_announce_checkpoint();

CREATE TRIGGER verity_announce AFTER INSERT OR UPDATE ON "inbox_claims"
  FOR EACH ROW EXECUTE FUNCTION verity_announce_inbox_claim();

-- A console session that ends (signed out, its person disabled or re-roled) closes its open
-- live stream at once. Announced by the sha256 of its id: the id is half of a credential, and
-- every listener of the database hears this channel; the server compares digests.
CREATE FUNCTION verity_announce_session_end() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('verity_changes', json_build_object('t', NEW.tenant_id, 'k', 'session_ended', 'id', encode(sha256(convert_to(NEW.id, 'UTF8')), 'hex'))::text);
  RETURN NULL;
END
$$;

CREATE TRIGGER verity_announce_end AFTER UPDATE OF "ended_at" ON "console_sessions"
  FOR EACH ROW WHEN (OLD."ended_at" IS NULL AND NEW."ended_at" IS NOT NULL) EXECUTE FUNCTION verity_announce_session_end();
