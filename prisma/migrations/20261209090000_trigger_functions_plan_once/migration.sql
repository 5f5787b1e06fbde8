-- Two functions every write calls from its triggers, planned once per
-- connection instead of once per call (docs/benchmarks.md, "Planned once").
--
-- Both were LANGUAGE sql functions that PostgreSQL cannot inline:
-- verity_announcing() reads a table, and audit_chain_hash() is declared
-- IMMUTABLE around convert_to(), which is only STABLE. A SQL function that
-- is not inlined is parsed and planned again each time a trigger calls it:
-- pg_stat_statements counted, per refund through the ledger, five plans of
-- the switch's read (0.12 ms) and six of the hash (0.05 ms, besides its
-- 0.08 ms of execution) out of about 3.5 ms of the database's CPU. PL/pgSQL
-- keeps each function's plan for the connection's life.
--
-- The same results: the same expressions over the same inputs, so every
-- existing link verifies unchanged (lib/model/audit/audit-chain.ts mirrors
-- the hash byte for byte), and the switch still reads its one row in the
-- writing transaction, seeing a change of it as soon as it commits.
--
-- The hash under a new name, audit_link_hash, and the chain's trigger
-- function replaced to call it: run again over itself after an interrupted
-- start (lib/db/migrate.ts), its CREATE, without OR REPLACE on purpose,
-- fails as applied, and the applier confirms the rest statement by
-- statement (the replacements give the same functions again; the old
-- hash's DROP finds it gone). The switch keeps its name: the announcing
-- trigger functions call it.
CREATE FUNCTION audit_link_hash(prev_hash text, seq integer, content_digest text) RETURNS text
  LANGUAGE plpgsql IMMUTABLE STRICT
  AS $$
BEGIN
  RETURN encode(sha256(convert_to(prev_hash || E'\n' || seq::text || E'\n' || content_digest, 'UTF8')), 'hex');
END
$$;

-- As 20261207090000_audit_chain_head_update_first left it, with the new hash.
CREATE OR REPLACE FUNCTION audit_entries_link() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
BEGIN
  UPDATE audit_streams AS s
     SET last_seq = s.last_seq + 1,
         prev_hash = s.last_hash,
         last_hash = audit_link_hash(s.last_hash, s.last_seq + 1, NEW.content_digest),
         updated_at = now()
   WHERE s.tenant_id = verity_current_tenant() AND s.stream = NEW.stream
  RETURNING s.last_seq, s.prev_hash, s.last_hash INTO NEW.seq, NEW.prev_hash, NEW.hash;
  IF FOUND THEN
    RETURN NEW;
  END IF;
  INSERT INTO audit_streams AS s (stream, last_seq, prev_hash, last_hash, updated_at)
  VALUES (NEW.stream, 1, repeat('0', 64), audit_link_hash(repeat('0', 64), 1, NEW.content_digest), now())
  ON CONFLICT (tenant_id, stream) DO UPDATE
     SET last_seq = s.last_seq + 1,
         prev_hash = s.last_hash,
         last_hash = audit_link_hash(s.last_hash, s.last_seq + 1, NEW.content_digest),
         updated_at = now()
  RETURNING s.last_seq, s.prev_hash, s.last_hash INTO NEW.seq, NEW.prev_hash, NEW.hash;
  RETURN NEW;
END
$$;

DROP FUNCTION audit_chain_hash(text, integer, text);

CREATE OR REPLACE FUNCTION verity_announcing() RETURNS boolean
  LANGUAGE plpgsql STABLE
  AS $$
BEGIN
  RETURN coalesce((SELECT "enabled" FROM "live_announcements" WHERE "id"), true);
END
$$;
