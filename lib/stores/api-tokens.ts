import { randomBytes } from "node:crypto";
import { sha256Hex } from "@/lib/core/canonical-json";
import { directQuery, type Db, type Tx } from "@/lib/db/client";
import { Prisma, type ApiToken } from "@/lib/generated/prisma/client";
import type { Principal, Role } from "@/lib/model/permissions";
import { AgentScopesSchema, defaultAgentScopes, type AgentScopes } from "@/lib/model/agent-scopes";
import type { AuditActor } from "@/lib/model/audit/audit-chain";
import { tokenAuditEntry } from "@/lib/model/audit/agent-audit-events";
import { appendAuditEntry } from "@/lib/stores/audit-log";
import { AppError } from "@/lib/core/errors";
import { newId } from "@/lib/core/ids";

/**
 * The owner of the `api_tokens` table. Tokens carry 256 bits of randomness,
 * so a plain sha256 is enough to store them: the plaintext is shown once and
 * never kept. Every issue, revocation and rotation leaves an audit entry in
 * the same transaction.
 */

/** A token as it may be shown again: never the secret nor its hash. */
export interface ApiTokenView {
  id: string;
  name: string;
  identity: string;
  role: Role;
  prefix: string;
  scopes: AgentScopes;
  createdAt: Date;
  expiresAt: Date | null;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

type TokenRow = ApiToken;

function viewOf(row: TokenRow): ApiTokenView {
  const scopes = AgentScopesSchema.safeParse(row.scopes);
  return {
    id: row.id,
    name: row.name,
    identity: row.identity,
    role: row.role,
    prefix: row.tokenPrefix,
    // A column that does not parse grants nothing (authenticate refuses it too).
    scopes: scopes.success ? scopes.data : { workflows: [], tools: [], take_over_leases: false },
    createdAt: row.createdAt,
    expiresAt: row.expiresAt,
    lastUsedAt: row.lastUsedAt,
    revokedAt: row.revokedAt,
  };
}

/** last_used_at is written at most this often per token: reading it is for people, not for every request to pay a write. */
const LAST_USED_RESOLUTION_MS = 60_000;

export interface IssueApiTokenInput {
  name: string;
  identity: string;
  role?: Role;
  /** A fixed token (the demo's); otherwise 256 random bits. */
  token?: string;
  scopes?: AgentScopes;
  expiresAt?: Date | null;
}

async function insertToken(tx: Tx, input: IssueApiTokenInput): Promise<{ token: string; row: TokenRow }> {
  const token = input.token ?? `vrt_${randomBytes(32).toString("base64url")}`;
  const row = await tx.apiToken.create({
    data: {
      id: newId("tok"),
      name: input.name,
      identity: input.identity,
      role: input.role ?? "agent",
      tokenHash: sha256Hex(token),
      tokenPrefix: token.slice(0, 8),
      scopes: AgentScopesSchema.parse(input.scopes ?? defaultAgentScopes),
      expiresAt: input.expiresAt ?? null,
    },
  });
  return { token, row };
}

/** A new token; the plaintext is in the answer and nowhere else. */
export async function issueApiToken(
  db: Db,
  input: IssueApiTokenInput,
  actor: AuditActor,
): Promise<{ token: string; id: string; view: ApiTokenView }> {
  return db.$transaction(async (tx) => {
    const { token, row } = await insertToken(tx, input);
    await appendAuditEntry(tx, tokenAuditEntry("agent.token_issued", row, actor, { role: row.role }));
    return { token, id: row.id, view: viewOf(row) };
  });
}

/**
 * The first token of a new identity, or null when the identity has tokens
 * already. The check and the insert hold a transaction-scoped advisory lock
 * on the identity: without it two creates of one name, both seeing none,
 * would both issue (api_tokens allows many rows per identity, for rotation).
 */
export async function issueFirstApiToken(
  db: Db,
  input: IssueApiTokenInput,
  actor: AuditActor,
): Promise<{ token: string; id: string; view: ApiTokenView } | null> {
  return db.$transaction(async (tx) => {
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended(${`api_tokens:${input.identity}`}, 0))`;
    if ((await tx.apiToken.count({ where: { identity: input.identity } })) > 0) return null;
    const { token, row } = await insertToken(tx, input);
    await appendAuditEntry(tx, tokenAuditEntry("agent.token_issued", row, actor, { role: row.role }));
    return { token, id: row.id, view: viewOf(row) };
  });
}

/** An identity's tokens, newest first, revoked and expired ones included (so the list says why a token stopped working). */
export async function listApiTokens(db: Db, identity: string): Promise<ApiTokenView[]> {
  const rows = await db.apiToken.findMany({ where: { identity }, orderBy: [{ createdAt: "desc" }, { id: "desc" }] });
  return rows.map(viewOf);
}

/** Every agent identity with its token count: the CLI's `agents list`. */
export async function listTokenIdentities(
  db: Db,
): Promise<Array<{ identity: string; name: string; tokens: number; activeTokens: number }>> {
  const now = new Date();
  const rows = await db.apiToken.findMany({ orderBy: [{ identity: "asc" }, { createdAt: "asc" }] });
  const byIdentity = new Map<string, { identity: string; name: string; tokens: number; activeTokens: number }>();
  for (const row of rows) {
    const entry = byIdentity.get(row.identity) ?? {
      identity: row.identity,
      name: row.name,
      tokens: 0,
      activeTokens: 0,
    };
    entry.tokens++;
    if (!row.revokedAt && (!row.expiresAt || row.expiresAt > now)) entry.activeTokens++;
    byIdentity.set(row.identity, entry);
  }
  return [...byIdentity.values()];
}

async function findTokenOrThrow(db: Db | Tx, id: string): Promise<TokenRow> {
  const row = await db.apiToken.findUnique({ where: { id } });
  if (!row) throw new AppError("not_found", `API token ${id} does not exist.`);
  return row;
}

/** Revoked at once; revoking a revoked token answers it as it is and records nothing more. */
export async function revokeApiToken(db: Db, id: string, actor: AuditActor): Promise<ApiTokenView> {
  return db.$transaction(async (tx) => {
    const now = new Date();
    const { count } = await tx.apiToken.updateMany({ where: { id, revokedAt: null }, data: { revokedAt: now } });
    const row = await findTokenOrThrow(tx, id);
    if (count === 1) await appendAuditEntry(tx, tokenAuditEntry("agent.token_revoked", row, actor));
    return viewOf(row);
  });
}

/**
 * A new token with the old one's name, identity, role, scopes and lifetime;
 * the old one keeps working for `overlapMs` more (never longer than it
 * would have anyway), so the agent can switch without a gap. A revoked or
 * expired token cannot be rotated: issue a new one.
 */
export async function rotateApiToken(
  db: Db,
  id: string,
  options: { overlapMs: number },
  actor: AuditActor,
): Promise<{ token: string; id: string; view: ApiTokenView; previous: ApiTokenView }> {
  return db.$transaction(async (tx) => {
    const old = await findTokenOrThrow(tx, id);
    const now = new Date();
    const overlapEnd = new Date(now.getTime() + options.overlapMs);
    const oldEnd = old.expiresAt && old.expiresAt < overlapEnd ? old.expiresAt : overlapEnd;
    // Guarded on the row still being live: two rotations of one token cannot both succeed.
    const { count } = await tx.apiToken.updateMany({
      where: { id, revokedAt: null, OR: [{ expiresAt: null }, { expiresAt: { gt: now } }] },
      data: { expiresAt: oldEnd },
    });
    if (count !== 1) {
      throw new AppError("invariant_violated", `API token ${id} is revoked or expired: issue a new token instead.`, {
        violations: [{ invariant: "rotate_live_token", message: `Token ${id} is no longer live.` }],
      });
    }
    const lifetimeMs = old.expiresAt ? old.expiresAt.getTime() - old.createdAt.getTime() : null;
    const { token, row } = await insertToken(tx, {
      name: old.name,
      identity: old.identity,
      role: old.role,
      scopes: AgentScopesSchema.parse(old.scopes),
      expiresAt: lifetimeMs === null ? null : new Date(now.getTime() + lifetimeMs),
    });
    const previous = { ...old, expiresAt: oldEnd };
    await appendAuditEntry(
      tx,
      tokenAuditEntry("agent.token_rotated", previous, actor, {
        new_token_id: row.id,
        new_prefix: row.tokenPrefix,
        new_expires_at: row.expiresAt?.toISOString() ?? null,
      }),
    );
    return { token, id: row.id, view: viewOf(row), previous: viewOf(previous) };
  });
}

/** A token's principal and the standing of its tenant, as one statement reads them. */
export interface AuthenticatedToken {
  principal: Principal;
  /** The tenant register's status (active, suspended, deleted); null when its row cannot be read. */
  tenantStatus: string | null;
}

interface TokenLookupRow {
  id: string;
  name: string;
  identity: string;
  role: Role;
  tenantId: string;
  scopes: unknown;
  revokedAt: Date | null;
  expiresAt: Date | null;
  lastUsedAt: Date | null;
  tenantStatus: string | null;
}

/**
 * The principal behind a bearer token and its tenant's standing, in one
 * round trip; null for an unknown, revoked or expired token, or one whose
 * scopes do not parse (fail closed). Read afresh on every request, never
 * cached: a revocation or a suspension committed by any server refuses the
 * very next request everywhere. One prepared statement on the pool, not two
 * Prisma queries: the API pays it on every request (docs/benchmarks.md,
 * "The API next to the engine"). Records when it was last used, at most once
 * a minute per token: a conditional UPDATE that matches nothing on the other
 * requests.
 */
export async function authenticateApiTokenWithTenant(db: Db, token: string): Promise<AuthenticatedToken | null> {
  const [row] = await directQuery<TokenLookupRow>(
    db,
    Prisma.sql`
    SELECT t.id, t.name, t.identity, t.role::text AS role, t.tenant_id AS "tenantId", t.scopes,
           t.revoked_at AS "revokedAt", t.expires_at AS "expiresAt", t.last_used_at AS "lastUsedAt",
           n.status AS "tenantStatus"
      FROM api_tokens t
      LEFT JOIN tenants n ON n.id = t.tenant_id
     WHERE t.token_hash = ${sha256Hex(token)}`,
    { prepare: "authenticate_token" },
  );
  const now = new Date();
  if (!row || row.revokedAt || (row.expiresAt && row.expiresAt <= now)) return null;
  const scopes = AgentScopesSchema.safeParse(row.scopes);
  if (!scopes.success) return null;
  if (!row.lastUsedAt || now.getTime() - row.lastUsedAt.getTime() >= LAST_USED_RESOLUTION_MS) {
    await db.apiToken.updateMany({
      where: {
        id: row.id,
        OR: [{ lastUsedAt: null }, { lastUsedAt: { lt: new Date(now.getTime() - LAST_USED_RESOLUTION_MS) } }],
      },
      data: { lastUsedAt: now },
    });
  }
  return {
    principal: {
      kind: "agent",
      id: row.id,
      identity: row.identity,
      role: row.role,
      displayName: row.name,
      tenantId: row.tenantId,
      scopes: scopes.data,
    },
    tenantStatus: row.tenantStatus,
  };
}

/** The principal behind a bearer token, or null (authenticateApiTokenWithTenant without the tenant's standing). */
export async function authenticateApiToken(db: Db, token: string): Promise<Principal | null> {
  return (await authenticateApiTokenWithTenant(db, token))?.principal ?? null;
}
