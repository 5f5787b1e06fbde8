import type { Db, Tx } from "@/lib/db/client";
import { AppError } from "@/lib/core/errors";
import { type Prisma, type WorkflowVersion } from "@/lib/generated/prisma/client";
import type { AuditActor } from "@/lib/model/audit/audit-chain";
import {
  documentOf,
  getWorkflowByDigest,
  isWorkflowKnown,
  knownWorkflowDefinitions,
  rememberWorkflowDefinition,
  workflowDefinitions,
} from "@/lib/model/workflows";
import {
  defineWorkflow,
  type WorkflowDefinition,
  type WorkflowDefinitionData,
} from "@/lib/model/workflows/workflow-definition";
import { appendAuditEntry } from "@/lib/stores/audit-log";

/**
 * The owner of `workflow_versions`: every version of every workflow, shipped
 * or published, immutable once written and pinned by its digest (the sha256
 * of the definition's canonical JSON, the `workflow_digest` of every task on
 * it). Every write leaves its audit entry in the same transaction. Every
 * definition read or written here is remembered in the model's cache
 * (lib/model/workflows/index.ts), which the synchronous rules read by digest;
 * a version never changes, so that cache can never be stale, only incomplete,
 * and the readers below fill it.
 */

export interface WorkflowVersionView {
  name: string;
  version: number;
  digest: string;
  /** Exactly the document publishing accepts. */
  definition: WorkflowDefinitionData;
  builtIn: boolean;
  publishedBy: string;
  publishedAt: Date;
}

const startActor: AuditActor = { identity: "system:start", kind: "system" };

function toView(row: WorkflowVersion): WorkflowVersionView {
  const definition = row.definition as unknown as WorkflowDefinitionData;
  rememberWorkflowDefinition(definition, row.digest);
  return {
    name: row.name,
    version: row.version,
    digest: row.digest,
    definition,
    builtIn: row.builtIn,
    publishedBy: row.publishedBy,
    publishedAt: row.publishedAt,
  };
}

function publishedAuditEntry(def: WorkflowDefinition, builtIn: boolean, actor: AuditActor) {
  return {
    action: "workflow.published" as const,
    actor,
    subject: { type: "workflow_version" as const, id: def.digest },
    details: { workflow: def.name, version: def.version, digest: def.digest, built_in: builtIn },
  };
}

/**
 * The shipped definitions, registered under their own digests. Run by every
 * start (scripts/start.ts, the CLI, the test databases): each row goes in
 * with its audit entry in one transaction, and INSERT … ON CONFLICT DO
 * NOTHING makes a second start, a start racing this one, or a start killed
 * between two rows harmless. A shipped (name, version) already held by other
 * content (someone published "delivery" v3 before Verity shipped one) is
 * refused: tasks of both would be told apart by digest, but "delivery v3"
 * would name two things.
 */
export async function registerBuiltInWorkflows(db: Db): Promise<string[]> {
  const registered: string[] = [];
  for (const def of workflowDefinitions) {
    const inserted = await db.$transaction(async (tx) => {
      const rows = await tx.$queryRaw<Array<{ digest: string }>>`
        INSERT INTO workflow_versions (digest, name, version, definition, built_in, published_by)
        VALUES (${def.digest}, ${def.name}, ${def.version}, ${JSON.stringify(documentOf(def))}::jsonb, true, ${startActor.identity})
        ON CONFLICT DO NOTHING
        RETURNING digest`;
      // Not audited: a shipped definition is part of the release, not anyone's act; its row says
      // when it arrived (published_at, built_in). The audit log records publications by people and agents.
      return rows.length === 1;
    });
    if (inserted) registered.push(`${def.name} v${def.version}`);
    else {
      const holder = await db.workflowVersion.findFirst({
        where: { name: def.name, version: def.version },
        select: { digest: true },
      });
      if (holder && holder.digest !== def.digest)
        throw new Error(
          `workflow ${def.name} v${def.version} ships as ${def.digest}, but the registry holds ${holder.digest} under that version`,
        );
    }
  }
  return registered;
}

export type PublishOutcome = { kind: "published" | "already_published"; version: WorkflowVersionView };

/**
 * Writes one version, validated by the caller (lib/use-cases/workflows/publish-workflow.ts),
 * in its transaction. Publications of one name are serialized by an advisory
 * lock on it, so "newer than the newest" cannot be passed by two versions at
 * once. The same name, version and content again is a replay; the same name
 * and version with other content is a conflict naming what is published; a
 * version not above the newest is refused.
 */
export async function insertWorkflowVersion(
  tx: Tx,
  data: WorkflowDefinitionData,
  actor: AuditActor,
): Promise<PublishOutcome> {
  const def = defineWorkflow(data);
  await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${`workflow_versions:${def.name}`}))`;
  // (name, version) is unique per tenant, and row-level security shows this tenant's only.
  const same = await tx.workflowVersion.findFirst({
    where: { name: def.name, version: def.version },
  });
  if (same) {
    if (same.digest === def.digest) return { kind: "already_published", version: toView(same) };
    throw new AppError(
      "idempotency_conflict",
      `${def.name} v${def.version} is already published with other content (digest ${same.digest}); a published version never changes: publish it as a new version.`,
      { workflow: def.name, version: def.version, digest: same.digest },
    );
  }
  const newest = await tx.workflowVersion.findFirst({
    where: { name: def.name },
    orderBy: { version: "desc" },
    select: { version: true, digest: true },
  });
  if (newest && def.version <= newest.version) {
    const message = `${def.name} is at version ${newest.version} (${newest.digest}); a new version must be greater.`;
    throw new AppError("definition_invalid", `$.version: ${message}`, {
      problems: [{ path: "$.version", code: "version_not_newer", message }],
      errors: [{ field: "version", message }],
    });
  }
  const row = await tx.workflowVersion.create({
    data: {
      digest: def.digest,
      name: def.name,
      version: def.version,
      definition: data as unknown as Prisma.InputJsonValue,
      builtIn: false,
      publishedBy: actor.identity,
    },
  });
  await appendAuditEntry(tx, publishedAuditEntry(def, false, actor));
  return { kind: "published", version: toView(row) };
}

export async function findWorkflowVersion(
  db: Db | Tx,
  name: string,
  version?: number,
): Promise<WorkflowVersionView | null> {
  const row =
    version === undefined
      ? await db.workflowVersion.findFirst({ where: { name }, orderBy: { version: "desc" } })
      : await db.workflowVersion.findFirst({ where: { name, version } });
  return row ? toView(row) : null;
}

/** What new tasks of `name` are created with: the registry's newest version. */
export async function findLatestWorkflow(db: Db | Tx, name: string): Promise<WorkflowDefinition | null> {
  const view = await findWorkflowVersion(db, name);
  return view ? (getWorkflowByDigest(view.digest) ?? null) : null;
}

/** Every name in the registry, sorted. */
export async function listWorkflowNames(db: Db | Tx): Promise<string[]> {
  const rows = await db.workflowVersion.findMany({
    distinct: ["name"],
    select: { name: true },
    orderBy: { name: "asc" },
  });
  return rows.map((r) => r.name);
}

/** Every version, newest first within a name. */
export async function listWorkflowVersionViews(db: Db | Tx): Promise<WorkflowVersionView[]> {
  const rows = await db.workflowVersion.findMany({ orderBy: [{ name: "asc" }, { version: "desc" }] });
  return rows.map(toView);
}

export interface WorkflowVersionWithTasks extends WorkflowVersionView {
  /** Tasks pinned to this version's digest, in any status. */
  tasks: number;
}

/** Every version, newest first within a name, with how many tasks are pinned to each. */
export async function listWorkflowVersionRows(
  db: Db | Tx,
  filter: { name?: string } = {},
): Promise<WorkflowVersionWithTasks[]> {
  const [rows, counts] = await Promise.all([
    db.workflowVersion.findMany({
      where: filter.name ? { name: filter.name } : {},
      orderBy: [{ name: "asc" }, { version: "desc" }],
    }),
    db.task.groupBy({
      by: ["workflowDigest"],
      where: filter.name ? { workflowName: filter.name } : {},
      _count: { _all: true },
    }),
  ]);
  const byDigest = new Map(counts.map((c) => [c.workflowDigest, c._count._all]));
  return rows.map((row) => ({ ...toView(row), tasks: byDigest.get(row.digest) ?? 0 }));
}

/**
 * Makes sure the model's cache holds each of these digests: one query for
 * those it lacks, none when it has them all (the common case, so every task
 * read can afford it). A digest the registry does not hold stays unknown,
 * and the rules then refuse that task by name (workflow_definition_available).
 */
export async function loadWorkflowDefinitions(db: Db | Tx, digests: Iterable<string>): Promise<void> {
  const missing = [...new Set(digests)].filter((d) => !isWorkflowKnown(d));
  if (missing.length === 0) return;
  const rows = await db.workflowVersion.findMany({ where: { digest: { in: missing } } });
  for (const row of rows) toView(row);
}

/**
 * Loads every version this process has not seen: the background loop runs it
 * each pass, so the readers of task rows outside the task store (the
 * reconciler, the monitor) find a definition published by another process.
 */
export async function loadNewWorkflowDefinitions(db: Db): Promise<number> {
  const known = knownWorkflowDefinitions().map((d) => d.digest);
  const rows = await db.workflowVersion.findMany({ where: { digest: { notIn: known } } });
  for (const row of rows) toView(row);
  return rows.length;
}
