import { canonicalJson } from "@/lib/core/canonical-json";
import type {
  ActorKind,
  GateRule,
  Guard,
  NamedRejection,
  StateDefinition,
  TransitionDefinition,
  WorkflowDefinitionData,
} from "@/lib/model/workflows/workflow-definition";

/**
 * What changed between two versions of a workflow, as the document declares
 * it: states, edges (an edge from "any active state" is one edge, not one per
 * state, so widening a cancel edge reads as one change), who sets each gate,
 * and the named rejections. Fields are compared generically, so a field a
 * later format adds (a state's tools, a checkpoint boundary) shows up as a
 * change without this module learning its name. Items keep the order of the
 * newer document (removed ones the order of the older), so a diff reads in
 * the order the author wrote.
 */

/** One field of a state, gate rule, edge or rejection that differs; `undefined` is "absent". */
export interface FieldChange {
  field: string;
  before: unknown;
  after: unknown;
  /** When both sides are lists (or absent): the members only one side has, compared as canonical JSON. */
  added?: unknown[];
  removed?: unknown[];
}

export interface StateDiff {
  name: string;
  before: StateDefinition;
  after: StateDefinition;
  changes: FieldChange[];
}

/** A declared edge; `from: null` is a `fromAnyNonTerminal` edge, from every active state. */
export interface DeclaredEdge {
  key: string;
  from: string | null;
  to: string;
  by: ActorKind[];
  guards: Guard[];
  description: string;
}

export interface EdgeDiff {
  key: string;
  from: string | null;
  to: string;
  before: DeclaredEdge;
  after: DeclaredEdge;
  /** Who may take it now that could not before, and who no longer may. */
  byAdded: ActorKind[];
  byRemoved: ActorKind[];
  guardsAdded: Guard[];
  guardsRemoved: Guard[];
  /** Any other field: the description, or one a later format adds. */
  changes: FieldChange[];
}

export interface GateEntry {
  gate: string;
  rule: GateRule;
}

export interface GateDiff {
  gate: string;
  before: GateRule;
  after: GateRule;
  changes: FieldChange[];
}

export interface RejectionDiff {
  key: string;
  before: NamedRejection;
  after: NamedRejection;
  changes: FieldChange[];
}

export interface Changes<Entry, Diff> {
  added: Entry[];
  removed: Entry[];
  changed: Diff[];
}

export interface WorkflowDiff {
  /** Title, description, initial state, name: the document's own fields (version left out: it always differs). */
  document: FieldChange[];
  states: Changes<{ name: string; state: StateDefinition }, StateDiff>;
  edges: Changes<DeclaredEdge, EdgeDiff>;
  gates: Changes<GateEntry, GateDiff>;
  rejections: Changes<NamedRejection & { key: string }, RejectionDiff>;
  /** No difference but the version number. */
  identical: boolean;
  /** How many things were added, removed or changed, over every section. */
  count: number;
}

/** Diffs `a` (older) against `b` (newer). Extra keys (a loaded definition's digest, its expanded edges) are ignored. */
export function diffWorkflowDefinitions(a: WorkflowDefinitionData, b: WorkflowDefinitionData): WorkflowDiff {
  const document = fieldChanges(documentFields(a), documentFields(b));
  const states = diffKeyed(
    Object.entries(a.states).map(([name, state]) => ({ name, state })),
    Object.entries(b.states).map(([name, state]) => ({ name, state })),
    (s) => s.name,
    (before, after): StateDiff | null => {
      const changes = fieldChanges(before.state, after.state);
      return changes.length ? { name: after.name, before: before.state, after: after.state, changes } : null;
    },
  );
  const edges = diffKeyed(declaredEdges(a), declaredEdges(b), (e) => e.key, diffEdge);
  const gates = diffKeyed(
    gateEntries(a),
    gateEntries(b),
    (g) => g.gate,
    (before, after): GateDiff | null => {
      const changes = fieldChanges(before.rule, after.rule);
      return changes.length ? { gate: after.gate, before: before.rule, after: after.rule, changes } : null;
    },
  );
  const rejections = diffKeyed(
    a.rejections.map((r) => ({ ...r, key: edgeKey(r.from, r.to) })),
    b.rejections.map((r) => ({ ...r, key: edgeKey(r.from, r.to) })),
    (r) => r.key,
    (before, after): RejectionDiff | null => {
      const { key: _b, ...beforeRule } = before;
      const { key: _a, ...afterRule } = after;
      const changes = fieldChanges(beforeRule, afterRule);
      return changes.length ? { key: after.key, before: beforeRule, after: afterRule, changes } : null;
    },
  );
  const count =
    document.length +
    [states, edges, gates, rejections].reduce((n, c) => n + sizeOf(c as Changes<unknown, unknown>), 0);
  return { document, states, edges, gates, rejections, identical: count === 0, count };
}

/** `from → to`, with `*` for an edge from any active state: the key edges and rejections are matched by. */
export function edgeKey(from: string | null, to: string): string {
  return `${from ?? "*"}→${to}`;
}

function sizeOf(c: Changes<unknown, unknown>): number {
  return c.added.length + c.removed.length + c.changed.length;
}

function documentFields(def: WorkflowDefinitionData): Record<string, unknown> {
  return { name: def.name, title: def.title, description: def.description, initial: def.initial };
}

function declaredEdges(def: WorkflowDefinitionData): DeclaredEdge[] {
  const edge = (from: string | null, t: Omit<TransitionDefinition, "from">): DeclaredEdge => ({
    ...t,
    key: edgeKey(from, t.to),
    from,
    guards: t.guards ?? [],
  });
  return [
    ...def.transitions.map(({ from, ...t }) => edge(from, t)),
    ...(def.fromAnyNonTerminal ?? []).map((t) => edge(null, t)),
  ];
}

function gateEntries(def: WorkflowDefinitionData): GateEntry[] {
  return Object.entries(def.gates ?? {}).flatMap(([gate, rule]) => (rule ? [{ gate, rule }] : []));
}

function diffEdge(before: DeclaredEdge, after: DeclaredEdge): EdgeDiff | null {
  const by = listDelta(before.by, after.by);
  const guards = listDelta(before.guards, after.guards);
  // by and guards are sets (their order means nothing); the rest compared as values.
  const { key: _k1, from: _f1, to: _t1, by: _b1, guards: _g1, ...beforeRest } = before;
  const { key: _k2, from: _f2, to: _t2, by: _b2, guards: _g2, ...afterRest } = after;
  const changes = fieldChanges(beforeRest, afterRest);
  if (!by.added.length && !by.removed.length && !guards.added.length && !guards.removed.length && !changes.length)
    return null;
  return {
    key: after.key,
    from: after.from,
    to: after.to,
    before,
    after,
    byAdded: by.added,
    byRemoved: by.removed,
    guardsAdded: guards.added,
    guardsRemoved: guards.removed,
    changes,
  };
}

function diffKeyed<Entry, Diff>(
  older: readonly Entry[],
  newer: readonly Entry[],
  keyOf: (entry: Entry) => string,
  compare: (before: Entry, after: Entry) => Diff | null,
): Changes<Entry, Diff> {
  const olderByKey = new Map(older.map((e) => [keyOf(e), e]));
  const newerKeys = new Set(newer.map(keyOf));
  const added: Entry[] = [];
  const changed: Diff[] = [];
  for (const entry of newer) {
    const before = olderByKey.get(keyOf(entry));
    if (before === undefined) added.push(entry);
    else {
      const diff = compare(before, entry);
      if (diff !== null) changed.push(diff);
    }
  }
  const removed = older.filter((e) => !newerKeys.has(keyOf(e)));
  return { added, removed, changed };
}

/** Members only one side has; equal members compared as canonical JSON, so `{kind, gates}` in any key order match. */
function listDelta<T>(before: readonly T[], after: readonly T[]): { added: T[]; removed: T[] } {
  const beforeKeys = new Set(before.map(canonicalJson));
  const afterKeys = new Set(after.map(canonicalJson));
  return {
    added: after.filter((x) => !beforeKeys.has(canonicalJson(x))),
    removed: before.filter((x) => !afterKeys.has(canonicalJson(x))),
  };
}

/**
 * Every field whose value differs, in the newer object's key order. Lists of
 * names (roles, gates a state requires) are sets here: reordering one is not
 * a change of meaning, and what was added and removed is what a reader wants.
 */
function fieldChanges(before: object, after: object): FieldChange[] {
  const b = before as Record<string, unknown>;
  const a = after as Record<string, unknown>;
  const fields = [...new Set([...Object.keys(a), ...Object.keys(b)])];
  const changes: FieldChange[] = [];
  for (const field of fields) {
    const was = b[field];
    const is = a[field];
    const wasList = was === undefined || Array.isArray(was);
    const isList = is === undefined || Array.isArray(is);
    if (wasList && isList && (Array.isArray(was) || Array.isArray(is))) {
      const delta = listDelta((was as unknown[] | undefined) ?? [], (is as unknown[] | undefined) ?? []);
      if (delta.added.length || delta.removed.length) changes.push({ field, before: was, after: is, ...delta });
    } else if (canonicalJson(was ?? null) !== canonicalJson(is ?? null)) {
      changes.push({ field, before: was, after: is });
    }
  }
  return changes;
}
