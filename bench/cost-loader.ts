/**
 * The bulk loader of bench:cost (docs/cost-growth.md): tasks, their
 * transitions, their audit chains and a share of alerts, made by SQL
 * (generate_series) as copies of template tasks that the real write path
 * made (createTask, transitionTask, raiseAlert), in a throwaway database
 * migrated with the real migrations.
 *
 * What a copy changes, and how it stays a row the real path could have
 * written:
 * - ids: the template's prefix and 26 characters of the same alphabet
 *   (`<prefix>_zz<12 digits of the task><12 digits of the version>`);
 * - the task id and intent wherever they appear (columns, the state
 *   documents, the audit entries' subject and task);
 * - times: the task's creation moved back by 37 s per task number, every
 *   later time of the task (transitions, audit entries, update) kept at the
 *   template's offset from it, also inside the state documents;
 * - the audit chain: each entry's content digest recomputed in SQL from its
 *   fields exactly as lib/model/audit/audit-chain.ts contentDigestOf does
 *   (canonical JSON, sorted keys, ISO times) and its hash linked with the
 *   migrations' own audit_link_hash(), as a running aggregate over the
 *   stream in seq order; the stream's head row written from the last link.
 *   The bench checks both against the template's real entries and verifies
 *   loaded chains with the product's verifier.
 * The inserts run with session_replication_role = replica: the chain
 * trigger (which would compute the same links one row at a time), the
 * append-only guards, the foreign-key triggers, the change announcements
 * and the task counting are off for the loader's own connection only; the
 * loader appends the counts' changes itself, one row per (workflow,
 * status) of each range, as the fold would sum them.
 */
import type pg from "pg";

/** The SQL helpers the loader needs, created in the throwaway database (dropped with it). */
export const loaderFunctionsSql = `
CREATE FUNCTION cost_id(prefix text, task bigint, version integer) RETURNS text
  LANGUAGE sql IMMUTABLE STRICT
  AS $$ SELECT prefix || '_zz' || lpad(task::text, 12, '0') || lpad(version::text, 12, '0') $$;

CREATE FUNCTION cost_iso(at timestamptz) RETURNS text
  LANGUAGE sql IMMUTABLE STRICT
  AS $$ SELECT to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') $$;

-- contentDigestOf(): sha256 of the canonical JSON of the entry's fields (canonicalJson: keys sorted by
-- code unit, COLLATE "C" here; no spaces; strings as JSON.stringify writes them, the loader's being
-- plain ASCII). The details are a flat object of scalars. PL/pgSQL: its expressions are planned once,
-- where nested SQL functions that cannot be inlined cost a call each.
CREATE FUNCTION cost_content_digest(id text, stream text, at timestamptz, actor text, actor_kind text, action text,
                                    subject_type text, subject_id text, task_id text, details jsonb) RETURNS text
  LANGUAGE plpgsql IMMUTABLE
  AS $$
DECLARE
  flat text;
BEGIN
  SELECT '{' || coalesce(string_agg(to_json(k)::text || ':' || v::text, ',' ORDER BY k COLLATE "C"), '') || '}'
    INTO flat FROM jsonb_each(details) AS e(k, v);
  RETURN encode(sha256(convert_to(
    '{"action":' || coalesce(to_json(action)::text, 'null') || ',"actor":' || coalesce(to_json(actor)::text, 'null') ||
    ',"actor_kind":' || coalesce(to_json(actor_kind)::text, 'null') ||
    ',"at":' || to_json(to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))::text ||
    ',"details":' || flat || ',"id":' || to_json(id)::text || ',"stream":' || to_json(stream)::text ||
    ',"subject_id":' || coalesce(to_json(subject_id)::text, 'null') ||
    ',"subject_type":' || coalesce(to_json(subject_type)::text, 'null') ||
    ',"task_id":' || coalesce(to_json(task_id)::text, 'null') || '}', 'UTF8')), 'hex');
END
$$;

-- One link after another: the running aggregate over a stream in seq order of the migration's
-- audit_link_hash(), whose body this repeats (PL/pgSQL for the same reason as above).
CREATE FUNCTION cost_chain_step(prev text, seq integer, digest text) RETURNS text
  LANGUAGE plpgsql IMMUTABLE
  AS $$ BEGIN RETURN encode(sha256(convert_to(coalesce(prev, repeat('0', 64)) || E'\\n' || seq::text || E'\\n' || digest, 'UTF8')), 'hex'); END $$;
CREATE AGGREGATE cost_chain(integer, text) (SFUNC = cost_chain_step, STYPE = text);

-- The template of each task number: slot = task % 20.
CREATE TABLE cost_slots (slot integer PRIMARY KEY, task_id text NOT NULL, kind text NOT NULL);
`;

/** The templates' rows, copied once the real path has written them and cost_slots names them. */
export async function copyTemplates(client: pg.Client): Promise<void> {
  await client.query(`
    CREATE TABLE cost_template_tasks AS SELECT * FROM tasks WHERE id IN (SELECT task_id FROM cost_slots);
    CREATE TABLE cost_template_transitions AS SELECT * FROM transitions WHERE task_id IN (SELECT task_id FROM cost_slots);
    CREATE TABLE cost_template_audit AS SELECT * FROM audit_entries WHERE stream IN (SELECT 'task:' || task_id FROM cost_slots);
    CREATE TABLE cost_template_alerts AS SELECT * FROM divergence_alerts;
    ANALYZE cost_template_tasks, cost_template_transitions, cost_template_audit, cost_template_alerts`);
}

/** ISO times inside a state document moved by the same shift as the row. */
const shiftedState = (doc: string, shift: string) => `
  (SELECT jsonb_object_agg(k, CASE
            WHEN k IN ('created_at', 'updated_at') AND jsonb_typeof(v) = 'string'
              THEN to_jsonb(cost_iso((v #>> '{}')::timestamptz + ${shift}))
            WHEN k = 'task_id' THEN to_jsonb(cost_id('task', g, 0))
            WHEN k = 'intent_id' THEN to_jsonb('intent-' || lpad(g::text, 9, '0'))
            ELSE v END)
     FROM jsonb_each(${doc}) AS e(k, v))`;

/**
 * Tasks [from, to) with every transition and audit entry of their
 * templates, and an alert for one task in `alertEvery`. One statement per
 * table, in the loader's own transaction.
 */
export async function loadTaskRange(
  client: pg.Client,
  range: { from: number; to: number; base: Date; alertEvery: number; alertTemplate: string | null },
): Promise<void> {
  const { from, to } = range;
  const base = range.base.toISOString();
  // The task's creation: 37 s before the previous one's.
  const created = `('${base}'::timestamptz - g * interval '37 seconds')`;
  // The templates' rows are read from copies (cost_template_*, copyTemplates): joining the growing tables would scan them.
  const tasks = `generate_series(${from}, ${to - 1}) AS g JOIN cost_slots s ON s.slot = g % 20 JOIN cost_template_tasks t ON t.id = s.task_id`;
  const shift = `(${created} - t.created_at)`;
  const profile = process.env.BENCH_COST_PROFILE === "1";
  const query = async (text: string, values?: unknown[]) => {
    const t0 = performance.now();
    await client.query(text, values);
    if (profile) console.log(`#   ${(performance.now() - t0).toFixed(0)} ms: ${text.trim().slice(0, 40)}`);
  };
  await client.query("BEGIN");
  try {
    await client.query("SET LOCAL session_replication_role = replica");
    await query(`
      INSERT INTO tasks (tenant_id, id, workflow_name, workflow_version, workflow_digest, status, version, state, intent_id,
                         created_at, created_by, updated_at, updated_by)
      SELECT t.tenant_id, cost_id('task', g, 0), t.workflow_name, t.workflow_version, t.workflow_digest, t.status, t.version,
             ${shiftedState("t.state", shift)}, 'intent-' || lpad(g::text, 9, '0'),
             t.created_at + ${shift}, t.created_by, t.updated_at + ${shift}, t.updated_by
        FROM ${tasks}`);
    // What the tasks' counting trigger (migration 20261206090000_task_counts), off here with the others,
    // would have appended: each copy counted once, with its template's budget.
    await query(`
      INSERT INTO task_count_changes (tenant_id, workflow_name, status, tasks, usd_spent, usd_committed, tokens_spent)
      SELECT t.tenant_id, t.workflow_name, t.status, count(*), sum(verity_task_budget(t.state, 'currency_spent_usd')),
             sum(verity_task_budget(t.state, 'currency_committed_usd')), sum(verity_task_budget(t.state, 'tokens_spent'))
        FROM ${tasks}
       GROUP BY t.tenant_id, t.workflow_name, t.status`);
    await query(`
      INSERT INTO transitions (tenant_id, id, task_id, from_version, to_version, from_status, to_status, actor, actor_kind,
                               reason, patch, state_after, request_digest, created_at)
      SELECT r.tenant_id, cost_id(split_part(r.id, '_', 1), g, r.to_version), cost_id('task', g, 0), r.from_version, r.to_version,
             r.from_status, r.to_status, r.actor, r.actor_kind, r.reason, r.patch, ${shiftedState("r.state_after", shift)},
             r.request_digest, r.created_at + ${shift}
        FROM ${tasks} JOIN cost_template_transitions r ON r.task_id = t.id`);
    // The template's task stream, entry by entry, with the copy's ids, times and links.
    await query(`
      WITH copied AS (
        SELECT e.tenant_id, cost_id(split_part(e.id, '_', 1), g, e.seq) AS id, 'task:' || cost_id('task', g, 0) AS stream, e.seq,
               e.at + ${shift} AS at, e.actor, e.actor_kind, e.action, e.subject_type, cost_id('task', g, 0) AS subject_id,
               cost_id('task', g, 0) AS task_id,
               CASE WHEN e.details ? 'transition_id'
                    THEN jsonb_set(e.details, '{transition_id}',
                                   to_jsonb(cost_id(split_part(e.details ->> 'transition_id', '_', 1), g, (e.details ->> 'to_version')::int)))
                    ELSE e.details END AS details
          FROM ${tasks} JOIN cost_template_audit e ON e.stream = 'task:' || t.id
      ), digested AS (
        SELECT c.*, cost_content_digest(c.id, c.stream, c.at, c.actor, c.actor_kind::text, c.action, c.subject_type,
                                        c.subject_id, c.task_id, c.details) AS content_digest
          FROM copied c
      ), linked AS (
        SELECT d.*, cost_chain(d.seq, d.content_digest) OVER (PARTITION BY d.stream ORDER BY d.seq) AS hash FROM digested d
      ), inserted AS (
        INSERT INTO audit_entries (tenant_id, id, stream, seq, at, actor, actor_kind, action, subject_type, subject_id, task_id,
                                   details, content_digest, prev_hash, hash)
        SELECT tenant_id, id, stream, seq, at, actor, actor_kind, action, subject_type, subject_id, task_id, details, content_digest,
               coalesce(lag(hash) OVER (PARTITION BY stream ORDER BY seq), repeat('0', 64)), hash
          FROM linked
        RETURNING tenant_id, stream, seq, at, prev_hash, hash
      )
      INSERT INTO audit_streams (tenant_id, stream, last_seq, prev_hash, last_hash, updated_at)
      SELECT DISTINCT ON (stream) tenant_id, stream, seq, prev_hash, hash, at FROM inserted ORDER BY stream, seq DESC`);
    if (range.alertTemplate) {
      await query(
        `
        INSERT INTO divergence_alerts (tenant_id, id, task_id, execution_id, kind, severity, message, internal, external, status,
                                       version, created_at, resolved_at, resolved_by, resolution, source, fingerprint, occurrences,
                                       last_seen_at, updated_at, review_id)
        SELECT a.tenant_id, cost_id(split_part(a.id, '_', 1), g, 0), cost_id('task', g, 0), a.execution_id, a.kind, a.severity,
               a.message, a.internal, a.external, a.status, a.version, ${created} + interval '1 second', a.resolved_at, a.resolved_by,
               a.resolution, a.source, replace(a.fingerprint, a.task_id, cost_id('task', g, 0)), a.occurrences, ${created} + interval '1 second',
               ${created} + interval '1 second', a.review_id
          FROM generate_series(${from}, ${to - 1}) AS g JOIN cost_template_alerts a ON a.id = $1
         WHERE g % ${range.alertEvery} = 7`,
        [range.alertTemplate],
      );
    }
    await client.query("COMMIT");
  } catch (error) {
    await client.query("ROLLBACK").catch(() => {});
    throw error;
  }
}
