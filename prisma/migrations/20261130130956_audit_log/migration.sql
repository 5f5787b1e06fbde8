-- CreateEnum
CREATE TYPE "AuditActorKind" AS ENUM ('user', 'agent', 'system', 'anonymous');

-- CreateTable
CREATE TABLE "audit_entries" (
    "id" TEXT NOT NULL,
    "stream" TEXT NOT NULL,
    "seq" INTEGER NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL,
    "actor" TEXT NOT NULL,
    "actor_kind" "AuditActorKind" NOT NULL,
    "action" TEXT NOT NULL,
    "subject_type" TEXT NOT NULL,
    "subject_id" TEXT NOT NULL,
    "task_id" TEXT,
    "details" JSONB NOT NULL,
    "content_digest" TEXT NOT NULL,
    "prev_hash" TEXT NOT NULL,
    "hash" TEXT NOT NULL,

    CONSTRAINT "audit_entries_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "audit_streams" (
    "stream" TEXT NOT NULL,
    "last_seq" INTEGER NOT NULL,
    "prev_hash" TEXT NOT NULL,
    "last_hash" TEXT NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "audit_streams_pkey" PRIMARY KEY ("stream")
);

-- CreateTable
CREATE TABLE "audit_anchors" (
    "stream" TEXT NOT NULL,
    "through_seq" INTEGER NOT NULL,
    "hash" TEXT NOT NULL,
    "cut_at" TIMESTAMPTZ(3) NOT NULL,
    "entry_id" TEXT NOT NULL,

    CONSTRAINT "audit_anchors_pkey" PRIMARY KEY ("stream")
);

-- CreateTable
CREATE TABLE "audit_legal_holds" (
    "id" TEXT NOT NULL,
    "task_id" TEXT,
    "from_at" TIMESTAMPTZ(3),
    "to_at" TIMESTAMPTZ(3),
    "reason" TEXT NOT NULL,
    "placed_by" TEXT NOT NULL,
    "placed_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "released_at" TIMESTAMPTZ(3),
    "released_by" TEXT,

    CONSTRAINT "audit_legal_holds_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "audit_entries_at_stream_seq_idx" ON "audit_entries"("at", "stream", "seq");

-- CreateIndex
CREATE INDEX "audit_entries_task_id_at_stream_seq_idx" ON "audit_entries"("task_id", "at", "stream", "seq");

-- CreateIndex
CREATE INDEX "audit_entries_actor_at_idx" ON "audit_entries"("actor", "at");

-- CreateIndex
CREATE UNIQUE INDEX "audit_entries_stream_seq_key" ON "audit_entries"("stream", "seq");

-- CreateIndex
CREATE INDEX "audit_legal_holds_released_at_idx" ON "audit_legal_holds"("released_at");

-- ---------------------------------------------------------------------------
-- Hand-written below: what Prisma's schema language cannot say. Plain SQL
-- that PostgreSQL 15 and PGlite (17) both accept.
-- ---------------------------------------------------------------------------

-- A hold's range, when it has both ends, is not empty.
ALTER TABLE "audit_legal_holds" ADD CONSTRAINT "audit_legal_holds_range_check"
  CHECK ("from_at" IS NULL OR "to_at" IS NULL OR "from_at" < "to_at");

-- One link of a chain: sha256 of "<prev_hash>\n<seq>\n<content_digest>", hex.
-- lib/engine/audit-chain.ts computes the same thing to verify.
CREATE FUNCTION audit_chain_hash(prev_hash text, seq integer, content_digest text) RETURNS text
  LANGUAGE sql IMMUTABLE STRICT
  AS $$ SELECT encode(sha256(convert_to(prev_hash || E'\n' || seq::text || E'\n' || content_digest, 'UTF8')), 'hex') $$;

-- Every insert is linked here, whoever sends it: the stream's head row is
-- upserted (ON CONFLICT DO UPDATE locks it and reads its latest committed
-- version, so two appends to one stream queue up instead of forking), and the
-- entry gets the next seq, the head's hash as prev_hash, and its own hash.
-- Appends to different streams touch different head rows and never wait on
-- each other. Values the writer sent for seq, prev_hash and hash are ignored.
CREATE FUNCTION audit_entries_chain() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
BEGIN
  INSERT INTO audit_streams AS s (stream, last_seq, prev_hash, last_hash, updated_at)
  VALUES (NEW.stream, 1, repeat('0', 64), audit_chain_hash(repeat('0', 64), 1, NEW.content_digest), now())
  ON CONFLICT (stream) DO UPDATE
     SET last_seq = s.last_seq + 1,
         prev_hash = s.last_hash,
         last_hash = audit_chain_hash(s.last_hash, s.last_seq + 1, NEW.content_digest),
         updated_at = now()
  RETURNING s.last_seq, s.prev_hash, s.last_hash INTO NEW.seq, NEW.prev_hash, NEW.hash;
  RETURN NEW;
END
$$;

CREATE TRIGGER audit_entries_chain BEFORE INSERT ON audit_entries
  FOR EACH ROW EXECUTE FUNCTION audit_entries_chain();

-- Append-only: UPDATE, DELETE and TRUNCATE are refused. The one exception is
-- a DELETE inside audit_cut_stream(), which checks legal holds and the
-- retention cutoff and records an anchor first. (The flag is a transaction-
-- local setting: this stops application bugs and casual edits; someone with
-- SQL access can set it too, and that is what the hash chain is for.)
CREATE FUNCTION audit_entries_append_only() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
BEGIN
  IF TG_OP = 'DELETE' AND current_setting('verity.audit_retention', true) = 'on' THEN
    RETURN OLD;
  END IF;
  RAISE EXCEPTION 'audit_entries is append-only: % refused', TG_OP
    USING ERRCODE = 'restrict_violation',
          HINT = 'Correct an entry by appending an annotation.added entry; old entries leave only through audit_cut_stream().';
END
$$;

CREATE TRIGGER audit_entries_append_only BEFORE UPDATE OR DELETE ON audit_entries
  FOR EACH ROW EXECUTE FUNCTION audit_entries_append_only();
CREATE TRIGGER audit_entries_no_truncate BEFORE TRUNCATE ON audit_entries
  FOR EACH STATEMENT EXECUTE FUNCTION audit_entries_append_only();

-- Stream heads change only from inside the chain trigger (trigger depth 2):
-- a head moved by hand would hide a deleted or added tail.
CREATE FUNCTION audit_streams_guard() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
BEGIN
  IF TG_OP <> 'TRUNCATE' AND pg_trigger_depth() > 1 THEN
    RETURN NEW;
  END IF;
  RAISE EXCEPTION 'audit_streams is written only by the audit_entries chain trigger: % refused', TG_OP
    USING ERRCODE = 'restrict_violation';
END
$$;

CREATE TRIGGER audit_streams_guard BEFORE INSERT OR UPDATE OR DELETE ON audit_streams
  FOR EACH ROW EXECUTE FUNCTION audit_streams_guard();
CREATE TRIGGER audit_streams_no_truncate BEFORE TRUNCATE ON audit_streams
  FOR EACH STATEMENT EXECUTE FUNCTION audit_streams_guard();

-- Anchors change only inside audit_cut_stream().
CREATE FUNCTION audit_anchors_guard() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
BEGIN
  IF TG_OP IN ('INSERT', 'UPDATE') AND current_setting('verity.audit_retention', true) = 'on' THEN
    RETURN NEW;
  END IF;
  RAISE EXCEPTION 'audit_anchors is written only by audit_cut_stream(): % refused', TG_OP
    USING ERRCODE = 'restrict_violation';
END
$$;

CREATE TRIGGER audit_anchors_guard BEFORE INSERT OR UPDATE OR DELETE ON audit_anchors
  FOR EACH ROW EXECUTE FUNCTION audit_anchors_guard();
CREATE TRIGGER audit_anchors_no_truncate BEFORE TRUNCATE ON audit_anchors
  FOR EACH STATEMENT EXECUTE FUNCTION audit_anchors_guard();

-- Whether an unreleased legal hold covers an entry of `task_id` written at `at`.
CREATE FUNCTION audit_hold_covers(p_task_id text, p_at timestamptz) RETURNS boolean
  LANGUAGE sql STABLE
  AS $$
  SELECT EXISTS (
    SELECT 1 FROM audit_legal_holds h
     WHERE h.released_at IS NULL
       AND (h.task_id IS NULL OR h.task_id = p_task_id)
       AND (h.from_at IS NULL OR p_at >= h.from_at)
       AND (h.to_at IS NULL OR p_at < h.to_at))
$$;

-- The only way entries leave: a prefix of one stream, through seq
-- p_through_seq, every entry of it older than p_cutoff (itself in the past)
-- and none under a legal hold, recorded by the audit.retention_applied entry
-- p_entry_id of this transaction. The anchor keeps the hash of the last entry
-- removed, so verification of what remains starts from it.
CREATE FUNCTION audit_cut_stream(p_stream text, p_through_seq integer, p_cutoff timestamptz, p_entry_id text) RETURNS integer
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
  ON CONFLICT (stream) DO UPDATE
     SET through_seq = EXCLUDED.through_seq, hash = EXCLUDED.hash, cut_at = EXCLUDED.cut_at, entry_id = EXCLUDED.entry_id;
  PERFORM set_config('verity.audit_retention', 'off', true);
  RETURN v_deleted;
END
$$;
