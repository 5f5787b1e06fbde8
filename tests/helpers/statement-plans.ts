import pg from "pg";

/**
 * What an operation costs the database, read from its own statements: every
 * statement it sends is recorded at the node-postgres client (the product's
 * pools are node-postgres pools, so Prisma's queries and raw ones alike),
 * and its reads are replayed under EXPLAIN (ANALYZE, BUFFERS) on the same
 * database with the same session options (the tenant's role and setting,
 * so row-level security plans the same). Plain module (no vitest import):
 * bench:cost and the PostgreSQL tests both use it.
 */

export interface SentStatement {
  text: string;
  values: unknown[];
  /** The connection's `options` (a tenant pool's role and tenant setting). */
  options: string | undefined;
}

let capturing: SentStatement[] | null = null;
let installed = false;

function install(): void {
  if (installed) return;
  installed = true;
  const original = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const config = args[0];
    if (capturing) {
      const text = typeof config === "string" ? config : (config as { text?: string } | null)?.text;
      const values =
        typeof config === "string"
          ? Array.isArray(args[1])
            ? (args[1] as unknown[])
            : []
          : ((config as { values?: unknown[] }).values ?? []);
      const options = (this as unknown as { connectionParameters?: { options?: string } }).connectionParameters
        ?.options;
      if (text) capturing.push({ text, values, options });
    }
    return (original as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof pg.Client.prototype.query;
}

/** Runs `fn` and returns what it returned with every statement it sent (one capture at a time). */
export async function captureStatements<T>(fn: () => Promise<T>): Promise<{ result: T; sent: SentStatement[] }> {
  install();
  if (capturing) throw new Error("captureStatements: one capture at a time");
  const sent: SentStatement[] = [];
  capturing = sent;
  try {
    return { result: await fn(), sent };
  } finally {
    capturing = null;
  }
}

/** Only reads are replayed: EXPLAIN ANALYZE runs what it explains (a cut of an audit stream, a lock). */
function isPlainRead(text: string): boolean {
  const t = text.replace(/--[^\n]*\n/g, "").trim();
  if (!/^(SELECT|WITH)\b/i.test(t)) return false;
  return !/\b(INSERT|UPDATE|DELETE|FOR UPDATE|FOR SHARE|advisory|nextval|pg_notify|audit_cut_stream|set_config)\b/i.test(
    t,
  );
}

export interface PlanNode {
  "Node Type": string;
  "Relation Name"?: string;
  "Actual Rows"?: number;
  "Actual Loops"?: number;
  "Rows Removed by Filter"?: number;
  "Shared Hit Blocks"?: number;
  "Shared Read Blocks"?: number;
  "Temp Read Blocks"?: number;
  Plans?: PlanNode[];
}

export interface ExplainedStatement {
  text: string;
  plan: PlanNode;
  /** Shared buffers hit or read, and temporary blocks read, by the whole statement. */
  buffers: number;
}

/** Replays the reads among `sent` under EXPLAIN (ANALYZE, BUFFERS) on `url`; one connection per session options. */
export async function explainStatements(url: string, sent: SentStatement[]): Promise<ExplainedStatement[]> {
  const clients = new Map<string, pg.Client>();
  try {
    const explained: ExplainedStatement[] = [];
    for (const s of sent) {
      if (!isPlainRead(s.text)) continue;
      const key = s.options ?? "";
      let client = clients.get(key);
      if (!client) {
        client = new pg.Client({ connectionString: url, ...(s.options ? { options: s.options } : {}) });
        // The database may be dropped WITH (FORCE) while this idles: not an uncaught error.
        client.on("error", () => {});
        await client.connect();
        clients.set(key, client);
      }
      const result = await client.query<{ "QUERY PLAN": Array<{ Plan: PlanNode }> }>(
        `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${s.text}`,
        s.values,
      );
      const plan = result.rows[0]?.["QUERY PLAN"][0]?.Plan;
      if (!plan) continue;
      const buffers =
        (plan["Shared Hit Blocks"] ?? 0) + (plan["Shared Read Blocks"] ?? 0) + (plan["Temp Read Blocks"] ?? 0);
      explained.push({ text: s.text, plan, buffers });
    }
    return explained;
  } finally {
    for (const c of clients.values()) await c.end().catch(() => {});
  }
}

/** Rows a plan read from `relation`, over every scan of it: those it kept and those its filter removed, times the loops. */
export function rowsReadFrom(plan: PlanNode, relation: string): number {
  const own =
    plan["Relation Name"] === relation
      ? ((plan["Actual Rows"] ?? 0) + (plan["Rows Removed by Filter"] ?? 0)) * (plan["Actual Loops"] ?? 1)
      : 0;
  return own + (plan.Plans ?? []).reduce((n, p) => n + rowsReadFrom(p, relation), 0);
}
