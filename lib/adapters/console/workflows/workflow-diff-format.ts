import type { ActorKind, GateRule, StateDefinition } from "@/lib/model/workflows/workflow-definition";
import type { DeclaredEdge, FieldChange, WorkflowDiff } from "@/lib/model/workflows/workflow-diff";
import { describeGuard } from "@/lib/adapters/console/shared/format";

/**
 * A workflow diff in words, section by section, each line one thing added,
 * removed or changed with what about it changed. The page shows these; the
 * words are tested here so the page stays a list.
 */
export type DiffMark = "added" | "removed" | "changed";

export interface DiffLine {
  mark: DiffMark;
  subject: string;
  details: string[];
}

export interface DiffSection {
  id: "document" | "states" | "edges" | "gates" | "rejections";
  title: string;
  lines: DiffLine[];
}

const actorWords: Record<ActorKind, string> = { agent: "an agent", user: "a person", system: "Verity itself" };

export function describeActors(by: readonly ActorKind[]): string {
  return joinWords(by.map((k) => actorWords[k]));
}

const fieldWords: Record<string, string> = {
  name: "name",
  title: "title",
  description: "description",
  initial: "initial state",
  terminal: "terminal",
  success: "success",
  requiresGates: "gates required while here",
  tools: "tools allowed",
  checkpoint: "checkpoint on entering",
  roles: "who sets it",
  notSetBySameAs: "not by whoever set",
  invariant: "invariant",
  message: "message",
};

export function describeWorkflowDiff(diff: WorkflowDiff): DiffSection[] {
  const sections: DiffSection[] = [
    {
      id: "document",
      title: "The workflow",
      lines: diff.document.map((c) => ({
        mark: "changed",
        subject: fieldWords[c.field] ?? c.field,
        details: [value(c)],
      })),
    },
    {
      id: "states",
      title: "States",
      lines: [
        ...diff.states.added.map((s) => ({ mark: "added" as const, subject: s.name, details: stateFacts(s.state) })),
        ...diff.states.removed.map((s) => ({
          mark: "removed" as const,
          subject: s.name,
          details: stateFacts(s.state),
        })),
        ...diff.states.changed.map((s) => ({
          mark: "changed" as const,
          subject: s.name,
          details: s.changes.map(field),
        })),
      ],
    },
    {
      id: "edges",
      title: "Transitions",
      lines: [
        ...diff.edges.added.map((e) => ({ mark: "added" as const, subject: edgeSubject(e), details: edgeFacts(e) })),
        ...diff.edges.removed.map((e) => ({
          mark: "removed" as const,
          subject: edgeSubject(e),
          details: edgeFacts(e),
        })),
        ...diff.edges.changed.map((e) => ({
          mark: "changed" as const,
          subject: edgeSubject(e),
          details: [
            ...(e.byAdded.length ? [`now also taken by ${describeActors(e.byAdded)}`] : []),
            ...(e.byRemoved.length ? [`no longer taken by ${describeActors(e.byRemoved)}`] : []),
            ...e.guardsAdded.map((g) => `guard added: ${describeGuard(g)}`),
            ...e.guardsRemoved.map((g) => `guard removed: ${describeGuard(g)}`),
            ...e.changes.map(field),
          ],
        })),
      ],
    },
    {
      id: "gates",
      title: "Who sets the gates",
      lines: [
        ...diff.gates.added.map((g) => ({ mark: "added" as const, subject: g.gate, details: gateFacts(g.rule) })),
        ...diff.gates.removed.map((g) => ({ mark: "removed" as const, subject: g.gate, details: gateFacts(g.rule) })),
        ...diff.gates.changed.map((g) => ({
          mark: "changed" as const,
          subject: g.gate,
          details: g.changes.map(field),
        })),
      ],
    },
    {
      id: "rejections",
      title: "Refused on purpose",
      lines: [
        ...diff.rejections.added.map((r) => ({
          mark: "added" as const,
          subject: `${r.from} → ${r.to}`,
          details: [`${r.invariant}: ${r.message}`],
        })),
        ...diff.rejections.removed.map((r) => ({
          mark: "removed" as const,
          subject: `${r.from} → ${r.to}`,
          details: [`${r.invariant}: ${r.message}`],
        })),
        ...diff.rejections.changed.map((r) => ({
          mark: "changed" as const,
          subject: `${r.before.from} → ${r.before.to}`,
          details: r.changes.map(field),
        })),
      ],
    },
  ];
  return sections.filter((s) => s.lines.length > 0);
}

export function edgeSubject(edge: { from: string | null; to: string }): string {
  return `${edge.from ?? "any active state"} → ${edge.to}`;
}

function edgeFacts(e: DeclaredEdge): string[] {
  return [
    `“${e.description}”`,
    `taken by ${describeActors(e.by)}`,
    ...(e.guards.length ? [`only when ${joinWords(e.guards.map(describeGuard))}`] : []),
  ];
}

function stateFacts(s: StateDefinition): string[] {
  const facts = [`“${s.description}”`];
  if (s.terminal) facts.push(s.success ? "terminal, success" : "terminal");
  if (s.requiresGates?.length) facts.push(`requires ${s.requiresGates.join(", ")}`);
  return facts;
}

function gateFacts(rule: GateRule): string[] {
  return [
    `set by ${rule.roles.map((r) => `an ${r}`.replace(/^an ([^aeiou])/, "a $1")).join(" or ")}`,
    ...(rule.notSetBySameAs?.length ? [`not by whoever set ${rule.notSetBySameAs.join(", ")}`] : []),
    `“${rule.description}”`,
  ];
}

function field(c: FieldChange): string {
  const name = fieldWords[c.field] ?? c.field;
  if (c.added || c.removed) {
    const parts = [
      ...(c.added?.length ? [`added ${c.added.map(showItem).join(", ")}`] : []),
      ...(c.removed?.length ? [`removed ${c.removed.map(showItem).join(", ")}`] : []),
    ];
    return `${name}: ${parts.join("; ")}`;
  }
  return `${name}: ${value(c)}`;
}

function value(c: FieldChange): string {
  return `${show(c.before)} → ${show(c.after)}`;
}

function show(v: unknown): string {
  if (v === undefined || v === null) return "not set";
  if (typeof v === "string") return `“${v}”`;
  if (typeof v === "boolean") return v ? "yes" : "no";
  if (Array.isArray(v)) return v.length ? v.map(showItem).join(", ") : "none";
  return JSON.stringify(v);
}

/** A list's members are names (gates, roles, tools): shown bare. */
function showItem(v: unknown): string {
  return typeof v === "string" ? v : show(v);
}

function joinWords(words: readonly string[]): string {
  if (words.length <= 1) return words.join("");
  return `${words.slice(0, -1).join(", ")} or ${words[words.length - 1]}`;
}
