import type { Db, Tx } from "@/lib/db/client";
import { AppError } from "@/lib/core/errors";
import { digestOf } from "@/lib/core/canonical-json";
import type { Prisma, ToolVersion } from "@/lib/generated/prisma/client";
import { isUniqueViolation } from "@/lib/db/unique-violation";
import type { Actor } from "@/lib/model/actor";
import { appendAuditEntry } from "@/lib/stores/audit-log";
import { builtInDefinitionOf } from "@/lib/model/tools/built-in-tools";
import { rememberToolVersion } from "@/lib/model/tools/known-tool-versions";
import { toolVersionId, type ToolDefinition } from "@/lib/model/tools/tool-definition";

/**
 * The owner of `tool_versions`: every version of every tool, immutable once
 * written (its digest is the sha256 of the definition's canonical JSON) but
 * for its retirement. Every write leaves its audit entry in the same
 * transaction. Every definition read or written here is remembered for the
 * pure rules that need it (lib/model/tools/known-tool-versions.ts): a
 * version never changes, so that can never be stale.
 */

export interface ToolVersionView {
  id: string;
  name: string;
  version: number;
  definition: ToolDefinition;
  digest: string;
  builtIn: boolean;
  registeredBy: string;
  registeredAt: Date;
  retiredAt: Date | null;
  retiredBy: string | null;
}

function toView(row: ToolVersion): ToolVersionView {
  const definition = row.definition as unknown as ToolDefinition;
  rememberToolVersion(row.tenantId, definition);
  return {
    id: row.id,
    name: row.name,
    version: row.version,
    definition,
    digest: row.digest,
    builtIn: row.builtIn,
    registeredBy: row.registeredBy,
    registeredAt: row.registeredAt,
    retiredAt: row.retiredAt,
    retiredBy: row.retiredBy,
  };
}

export type RegisterOutcome = { kind: "registered" | "already_registered"; version: ToolVersionView };

/**
 * Writes one version (validated by the caller: lib/use-cases/tools/register-tool.ts).
 * The same name, version and content again is answered as already
 * registered (a retried request, a second start registering the built-ins);
 * the same name and version with other content is a conflict: a version,
 * once some call may have been recorded under it, never changes.
 */
export async function insertToolVersion(
  tx: Tx,
  def: ToolDefinition,
  options: { builtIn: boolean; actor: Actor },
): Promise<RegisterOutcome> {
  const id = toolVersionId(def.name, def.version);
  const digest = digestOf(def);
  // Registrations of one version wait for each other, so a twin (several servers
  // registering the shipped tools at the same start) reads the first one's row
  // and is a replay, not a unique violation that stopped a server's start.
  await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended(${`tool_versions:${id}`}::text || ':' || coalesce(verity_current_tenant(), ''), 0))`;
  // Unique per tenant (row-level security shows this tenant's only): findFirst, not findUnique.
  const existing = await tx.toolVersion.findFirst({ where: { id } });
  if (existing) return sameOrConflict(existing, digest);
  try {
    const row = await tx.toolVersion.create({
      data: {
        id,
        name: def.name,
        version: def.version,
        definition: def as unknown as Prisma.InputJsonValue,
        digest,
        builtIn: options.builtIn,
        registeredBy: options.actor.identity,
      },
    });
    // A shipped tool is part of the release, not anyone's act (its row says when it arrived): as for shipped workflows.
    if (!options.builtIn)
      await appendAuditEntry(tx, {
        action: "tool.registered",
        actor: options.actor,
        subject: { type: "tool", id: def.name },
        details: {
          tool: def.name,
          version: def.version,
          digest,
          built_in: options.builtIn,
          irreversible: def.irreversible,
          reconciliation: def.reconciliation.method,
        },
      });
    return { kind: "registered", version: toView(row) };
  } catch (error) {
    // A twin request inserted the same id between the read and the insert.
    if (!isUniqueViolation(error)) throw error;
    throw new AppError(
      "idempotency_conflict",
      `${id} was registered at the same moment by another request; read it and try again.`,
    );
  }
}

function sameOrConflict(existing: ToolVersion, digest: string): RegisterOutcome {
  if (existing.digest === digest) return { kind: "already_registered", version: toView(existing) };
  throw new AppError(
    "idempotency_conflict",
    `${existing.id} is already registered with other content (digest ${existing.digest}); a registered version never changes: register version ${existing.version + 1}.`,
    { tool: existing.name, version: existing.version, digest: existing.digest },
  );
}

/** Retires every version of the tool not yet retired; returns the versions retired now (none: it already was). */
export async function retireToolVersions(tx: Tx, name: string, actor: Actor, reason: string): Promise<number[]> {
  const live = await tx.toolVersion.findMany({ where: { name, retiredAt: null }, select: { id: true, version: true } });
  if (live.length === 0) return [];
  const now = new Date();
  // Guarded on retired_at, so of two racing retirements each version is retired (and audited) once.
  const retired: number[] = [];
  for (const v of live) {
    const { count } = await tx.toolVersion.updateMany({
      where: { id: v.id, retiredAt: null },
      data: { retiredAt: now, retiredBy: actor.identity },
    });
    if (count === 1) retired.push(v.version);
  }
  if (retired.length > 0)
    await appendAuditEntry(tx, {
      action: "tool.retired",
      actor,
      subject: { type: "tool", id: name },
      details: { tool: name, versions: retired, reason },
    });
  return retired;
}

export async function getToolVersion(db: Db | Tx, name: string, version: number): Promise<ToolVersionView | null> {
  const row = await db.toolVersion.findFirst({ where: { id: toolVersionId(name, version) } });
  return row ? toView(row) : null;
}

/** The newest version of the tool, retired or not; null when it was never registered. */
export async function getNewestToolVersion(db: Db | Tx, name: string): Promise<ToolVersionView | null> {
  const row = await db.toolVersion.findFirst({ where: { name }, orderBy: { version: "desc" } });
  return row ? toView(row) : null;
}

/** Every version of the tool, newest first. */
export async function listToolVersions(db: Db | Tx, name: string): Promise<ToolVersionView[]> {
  const rows = await db.toolVersion.findMany({ where: { name }, orderBy: { version: "desc" } });
  return rows.map(toView);
}

/** The newest version of every tool, by name. */
export async function listNewestToolVersions(db: Db | Tx): Promise<ToolVersionView[]> {
  const rows = await db.toolVersion.findMany({ distinct: ["name"], orderBy: [{ name: "asc" }, { version: "desc" }] });
  return rows.map(toView);
}

/** The names of every registered tool, retired or not. */
export async function listToolNames(db: Db | Tx): Promise<string[]> {
  const rows = await db.toolVersion.findMany({ distinct: ["name"], select: { name: true }, orderBy: { name: "asc" } });
  return rows.map((r) => r.name);
}

/**
 * The definition a call was recorded under: a built-in (recorded before the
 * registry, tool_version null, or its version 1), else the registered
 * version of this connection's tenant. Null when neither exists (a row from a server that knew another tool).
 */
export async function toolDefinitionOf(
  db: Db | Tx,
  name: string,
  version: number | null,
): Promise<ToolDefinition | null> {
  const builtIn = builtInDefinitionOf(name, version);
  if (builtIn) return builtIn;
  if (version === null) return null;
  // Read, not answered from the process's memory: this connection's tenant is the registry's scope.
  return (await getToolVersion(db, name, version))?.definition ?? null;
}
