import type { Db } from "@/lib/db/client";
import { gateRulesOf, getWorkflowByDigest, workflowDefinitions } from "@/lib/model/workflows";
import type { WorkflowDefinition } from "@/lib/model/workflows/workflow-definition";
import { diffWorkflowDefinitions } from "@/lib/model/workflows/workflow-diff";
import type { WorkflowVersionWithTasks } from "@/lib/stores/workflow-registry";
import { listWorkflowVersions } from "@/lib/use-cases/workflows/list-workflow-versions";
import type { WorkflowSummary, WorkflowVersionSummary } from "@/lib/adapters/console/workflows/workflow-views";
import {
  orderedStateNames,
  workflowStatesOf,
  type WorkflowStates,
} from "@/lib/adapters/console/workflows/workflow-states";
import { describeWorkflowDiff, type DiffSection } from "@/lib/adapters/console/workflows/workflow-diff-format";
import { defaultMapping } from "@/lib/adapters/console/workflows/migration-form";

/**
 * The workflows pages' data, read from the registry (every version, shipped
 * and published, with the tasks pinned to each). A name or version that is
 * not there is null, for the page's not-found.
 */

// Workflow names are the registry's alphabet (validate-definition.ts); anything else in a URL names nothing.
const workflowNamePattern = /^[a-z0-9][a-z0-9._-]{0,63}$/;

export function nameFromParam(raw: string): string | null {
  return workflowNamePattern.test(raw) ? raw : null;
}

export function versionFromParam(raw: string | string[] | undefined): number | null {
  const value = Array.isArray(raw) ? raw[0] : raw;
  if (value === undefined || !/^[1-9][0-9]{0,8}$/.test(value)) return null;
  return Number(value);
}

function summaryOf(row: WorkflowVersionWithTasks, current: boolean): WorkflowVersionSummary {
  return {
    name: row.name,
    version: row.version,
    title: row.definition.title,
    digest: row.digest,
    publishedBy: row.publishedBy,
    publishedAt: row.publishedAt,
    builtIn: row.builtIn,
    taskCount: row.tasks,
    current,
  };
}

/** Rows come newest first within a name: the first of each name is what new tasks get. */
function summariesOf(rows: readonly WorkflowVersionWithTasks[]): WorkflowVersionSummary[] {
  return rows.map((row, i) => summaryOf(row, rows.findIndex((r) => r.name === row.name) === i));
}

export async function loadWorkflowRegistry(db: Db): Promise<WorkflowSummary[]> {
  const rows = await listWorkflowVersions(db);
  const versions = summariesOf(rows);
  const names = [...new Set(rows.map((r) => r.name))];
  return names.map((name) => {
    const current = rows.find((r) => r.name === name)!;
    return {
      name,
      title: current.definition.title,
      description: current.definition.description,
      versions: versions.filter((v) => v.name === name),
    };
  });
}

function definitionOf(row: WorkflowVersionWithTasks): WorkflowDefinition {
  // The registry's read remembers each row's definition under its digest (rememberWorkflowDefinition).
  const def = getWorkflowByDigest(row.digest);
  if (!def) throw new Error(`workflow ${row.name} v${row.version} (${row.digest}) was read but is not known`);
  return def;
}

/** Where a version's gate rules come from when it declares none: a shipped version follows the newest shipped one's. */
function gateRulesFallback(
  def: WorkflowDefinition,
): { version: number; gates: WorkflowDefinition["gates"] } | undefined {
  if (def.gates) return undefined;
  const rules = gateRulesOf(def);
  const source = workflowDefinitions.find((d) => d.name === def.name && d.gates !== undefined && d.gates === rules);
  return source ? { version: source.version, gates: source.gates } : undefined;
}

export interface WorkflowVersionPage {
  summary: WorkflowVersionSummary;
  definition: WorkflowDefinition;
  graph: WorkflowStates;
  versions: WorkflowVersionSummary[];
}

export async function loadWorkflowVersion(db: Db, name: string, version: number): Promise<WorkflowVersionPage | null> {
  const rows = await listWorkflowVersions(db, { name });
  const versions = summariesOf(rows);
  const index = rows.findIndex((r) => r.version === version);
  const row = rows[index];
  const summary = versions[index];
  if (!row || !summary) return null;
  const definition = definitionOf(row);
  return { summary, definition, graph: workflowStatesOf(definition, gateRulesFallback(definition)), versions };
}

export interface WorkflowComparePage {
  name: string;
  versions: WorkflowVersionSummary[];
  compare: { from: WorkflowVersionSummary; to: WorkflowVersionSummary; sections: DiffSection[]; count: number } | null;
  problem: string | null;
}

/**
 * Two versions side by side. By default the newest against the one before
 * it; `to` alone compares it with the version before it. A version the
 * workflow does not have, or the same one twice, is said in words above the
 * form, which keeps what can be chosen.
 */
export async function loadWorkflowCompare(
  db: Db,
  name: string,
  fromParam: string | string[] | undefined,
  toParam: string | string[] | undefined,
): Promise<WorkflowComparePage | null> {
  const rows = await listWorkflowVersions(db, { name });
  if (rows.length === 0) return null;
  const versions = summariesOf(rows);
  const have = versions.map((v) => `v${v.version}`).join(", ");
  const unknown = (raw: string | string[] | undefined) =>
    `${String(Array.isArray(raw) ? raw[0] : raw)} is not a version of ${name}; it has ${have}.`;
  const toVersion = toParam === undefined ? rows[0]!.version : versionFromParam(toParam);
  const toIndex = rows.findIndex((r) => r.version === toVersion);
  if (toIndex < 0) return { name, versions, compare: null, problem: unknown(toParam) };
  const fromVersion = fromParam === undefined ? rows[toIndex + 1]?.version : versionFromParam(fromParam);
  if (fromVersion === undefined) return { name, versions, compare: null, problem: null };
  const fromIndex = rows.findIndex((r) => r.version === fromVersion);
  if (fromIndex < 0) return { name, versions, compare: null, problem: unknown(fromParam) };
  if (fromIndex === toIndex)
    return { name, versions, compare: null, problem: `Pick two different versions: both are v${toVersion}.` };
  const diff = diffWorkflowDefinitions(rows[fromIndex]!.definition, rows[toIndex]!.definition);
  return {
    name,
    versions,
    compare: {
      from: versions[fromIndex]!,
      to: versions[toIndex]!,
      sections: describeWorkflowDiff(diff),
      count: diff.count,
    },
    problem: null,
  };
}

export interface WorkflowMigrationPage {
  name: string;
  versions: WorkflowVersionSummary[];
  /** Both set when the pair can be planned; otherwise `problem` says why, in words. */
  pair: {
    from: WorkflowVersionSummary;
    to: WorkflowVersionSummary;
    fromStates: Array<{ name: string; terminal: boolean }>;
    toStates: Array<{ name: string; terminal: boolean }>;
    initialMapping: Record<string, string>;
  } | null;
  /** The versions asked for (or defaulted to), kept in the form when they cannot be planned. */
  chosen: { from: number | null; to: number | null };
  problem: string | null;
}

/**
 * The migration page's choice of versions. By default the current version
 * as the target and, as the source, the newest older version that has
 * tasks. Tasks move forward only: to a newer version than their own.
 */
export async function loadWorkflowMigration(
  db: Db,
  name: string,
  fromParam: string | string[] | undefined,
  toParam: string | string[] | undefined,
): Promise<WorkflowMigrationPage | null> {
  const rows = await listWorkflowVersions(db, { name });
  if (rows.length === 0) return null;
  const versions = summariesOf(rows);
  const have = versions.map((v) => `v${v.version}`).join(", ");
  const chosen = { from: versionFromParam(fromParam), to: versionFromParam(toParam) };
  const none = (problem: string | null): WorkflowMigrationPage => ({ name, versions, pair: null, chosen, problem });
  if (rows.length < 2) return none(`${name} has one version, so there is nowhere to move its tasks yet.`);
  const toVersion = toParam === undefined ? rows[0]!.version : versionFromParam(toParam);
  const to = rows.find((r) => r.version === toVersion);
  if (!to) return none(`${String(toParam)} is not a version of ${name}; it has ${have}.`);
  const older = rows.filter((r) => r.version < to.version);
  const fromVersion =
    fromParam === undefined ? (older.find((r) => r.tasks > 0) ?? older[0])?.version : versionFromParam(fromParam);
  const from = rows.find((r) => r.version === fromVersion);
  if (fromVersion === undefined) return none(`v${to.version} is the oldest version: tasks move only to a newer one.`);
  if (!from) return none(`${String(fromParam)} is not a version of ${name}; it has ${have}.`);
  if (from.version >= to.version)
    return none(
      `Tasks move only to a newer version than their own: v${to.version} is not newer than v${from.version}.`,
    );
  const statesOf = (row: WorkflowVersionWithTasks) =>
    orderedStateNames(row.definition).map((state) => ({
      name: state,
      terminal: row.definition.states[state]?.terminal === true,
    }));
  const fromStates = statesOf(from);
  const toStates = statesOf(to);
  return {
    name,
    versions,
    pair: {
      from: versions[rows.indexOf(from)]!,
      to: versions[rows.indexOf(to)]!,
      fromStates,
      toStates,
      initialMapping: defaultMapping(
        fromStates.filter((s) => !s.terminal).map((s) => s.name),
        toStates.map((s) => s.name),
      ),
    },
    chosen: { from: from.version, to: to.version },
    problem: null,
  };
}
