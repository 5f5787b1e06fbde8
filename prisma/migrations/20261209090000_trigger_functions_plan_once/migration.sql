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
-- The same results: the same expression over the same inputs, so every
-- existing link verifies unchanged (lib/model/audit/audit-chain.ts mirrors
-- the hash byte for byte), and the switch still reads its one row in the
-- writing transaction, seeing a change of it as soon as it commits.
-- CREATE OR REPLACE keeps the functions' identities, so the triggers and
-- the trigger functions that call them need no change; run again over
-- itself (lib/db/migrate.ts) it gives the same functions.
CREATE OR REPLACE FUNCTION audit_chain_hash(prev_hash text, seq integer, content_digest text) RETURNS text
  LANGUAGE plpgsql IMMUTABLE STRICT
  AS $$
BEGIN
  RETURN encode(sha256(convert_to(prev_hash || E'\n' || seq::text || E'\n' || content_digest, 'UTF8')), 'hex');
END
$$;

CREATE OR REPLACE FUNCTION verity_announcing() RETURNS boolean
  LANGUAGE plpgsql STABLE
  AS $$
BEGIN
  RETURN coalesce((SELECT "enabled" FROM "live_announcements" WHERE "id"), true);
END
$$;
