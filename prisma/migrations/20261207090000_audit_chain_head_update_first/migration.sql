-- The audit chain's trigger moves a stream's head with a plain UPDATE, and
-- inserts a head only for a stream's first entry (docs/benchmarks.md,
-- "Why the engine trails the baseline").
--
-- Before, every entry ran INSERT … ON CONFLICT DO UPDATE on the head: a
-- speculative insertion into the primary key, audit_streams' guard trigger
-- fired twice (before the insert, then before the update) and SHA-256 ran
-- twice (the genesis link was computed for the insert even when the head
-- existed, which for every stream but a new one is always). That was 0.36 ms
-- of the transition's 0.82 ms CAS statement. An existing stream now costs
-- one UPDATE, one guard call and one hash.
--
-- The same guarantees: the UPDATE locks the head row and, under READ
-- COMMITTED, re-reads its latest committed version before computing the next
-- link, so two appends to one stream still queue instead of forking (as the
-- conflict path did). A stream's first entry falls through to the upsert of
-- before, which also settles two first entries racing (the second finds the
-- first's head and links after it). The head is keyed as the upsert keys it:
-- the tenant the transaction runs as, and the stream.
--
-- A new function under the same trigger, not CREATE OR REPLACE: run again
-- over itself after an interrupted start, its CREATEs fail as applied and the
-- applier confirms it statement by statement (lib/db/migrate.ts), as for
-- every migration.
CREATE FUNCTION audit_entries_link() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
BEGIN
  UPDATE audit_streams AS s
     SET last_seq = s.last_seq + 1,
         prev_hash = s.last_hash,
         last_hash = audit_chain_hash(s.last_hash, s.last_seq + 1, NEW.content_digest),
         updated_at = now()
   WHERE s.tenant_id = verity_current_tenant() AND s.stream = NEW.stream
  RETURNING s.last_seq, s.prev_hash, s.last_hash INTO NEW.seq, NEW.prev_hash, NEW.hash;
  IF FOUND THEN
    RETURN NEW;
  END IF;
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

DROP TRIGGER audit_entries_chain ON audit_entries;
CREATE TRIGGER audit_entries_chain BEFORE INSERT ON audit_entries
  FOR EACH ROW EXECUTE FUNCTION audit_entries_link();
DROP FUNCTION audit_entries_chain();
