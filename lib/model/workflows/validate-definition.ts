import { z } from "zod";
import { Role } from "@/lib/generated/prisma/enums";
import { ArtifactsSchema, gateNames, GateNameSchema } from "@/lib/model/tasks/task-state";
import type { ActorKind, WorkflowDefinitionData } from "@/lib/model/workflows/workflow-definition";
import { dataClasses, dataClassProblems, type DataClassProblem } from "@/lib/model/data-classes";

/**
 * A workflow definition as a published JSON document: exactly the shape of
 * WorkflowDefinitionData, every object strict, so a document that fetches,
 * edits and publishes again round-trips field for field. Validation names
 * every problem at once, each at its JSON path, because a person fixing a
 * definition should not have to publish it once per mistake.
 */
export interface Problem {
  /** JSON path of the offending value, e.g. `$.transitions[3].to`. */
  path: string;
  code: ProblemCode;
  message: string;
}

type ProblemCode =
  // Shape (from the schema)
  | "wrong_type"
  | "missing_field"
  | "unknown_field"
  | "invalid_name"
  | "too_small"
  | "too_big"
  | "invalid_value"
  | "unknown_guard"
  | "unknown_gate"
  | "unknown_role"
  | "unknown_actor"
  | "unknown_artifact"
  | "unknown_tool"
  | "unknown_data_class"
  | "invalid_pointer"
  // Meaning (from the graph)
  | "unknown_state"
  | "unreachable_state"
  | "no_path_to_terminal"
  | "duplicate_edge"
  | "terminal_has_edges"
  | "success_not_terminal"
  | "rejection_contradicts_edge"
  | "no_terminal_state"
  // Warnings
  | "no_success_state";

export type WorkflowValidation =
  | { ok: true; definition: WorkflowDefinitionData; warnings: Problem[] }
  | { ok: false; problems: Problem[]; warnings: Problem[] };

const actorKinds = ["agent", "user", "system"] as const satisfies readonly ActorKind[];
const roles = Object.values(Role);

// Workflow names appear in agent token scopes, which accept exactly this alphabet.
const WorkflowNameSchema = z
  .string()
  .max(64, "At most 64 characters.")
  .regex(/^[a-z0-9][a-z0-9._-]*$/, "Lower-case letters, digits, . _ - only, starting with a letter or digit.")
  // /api/v1/workflows/migrations is the migrations endpoint: a workflow of that name could never be read.
  .refine((name) => name !== "migrations", "migrations is reserved: /api/v1/workflows/migrations is an endpoint.");
// State names are stored as a task's status and shown in URLs and filters: no spaces or punctuation.
const StateNameSchema = z
  .string()
  .max(64, "At most 64 characters.")
  .regex(/^[A-Za-z][A-Za-z0-9_]*$/, "Letters, digits and _ only, starting with a letter.");
// Invariant names are machine-readable codes in refusals (`completion_requires_validation`).
const InvariantNameSchema = z
  .string()
  .max(64, "At most 64 characters.")
  .regex(/^[a-z][a-z0-9_]*$/, "Lower-case letters, digits and _ only, starting with a letter.");
// The alphabet of tool names in agent token scopes and the tool registry: `payments.refund`.
const ToolNameSchema = z
  .string()
  .max(64, "At most 64 characters.")
  .regex(/^[a-z0-9][a-z0-9._-]*$/, "Lower-case letters, digits, . _ - only, starting with a letter or digit.");
const TextSchema = z.string().trim().min(1, "Must not be empty.").max(2000, "At most 2000 characters.");

const artifactNames = ArtifactsSchema.keyof().options;

const GuardSchema = z.discriminatedUnion("kind", [
  z.strictObject({ kind: z.literal("gates_true"), gates: z.array(GateNameSchema).min(1, "Name at least one gate.") }),
  z.strictObject({ kind: z.literal("mandatory_subtasks_completed") }),
  z.strictObject({ kind: z.literal("artifact_present"), artifact: z.enum(artifactNames) }),
  z.strictObject({ kind: z.literal("budget_within_commitment") }),
]);

const guardKinds = GuardSchema.options.map((option) => option.shape.kind.value);

const ActorsSchema = z.array(z.enum(actorKinds)).min(1, "Say who may take this edge.");

const TransitionSchema = z.strictObject({
  from: StateNameSchema,
  to: StateNameSchema,
  by: ActorsSchema,
  guards: z.array(GuardSchema).optional(),
  description: TextSchema,
});

const StateSchema = z.strictObject({
  description: TextSchema,
  terminal: z.boolean().optional(),
  success: z.boolean().optional(),
  requiresGates: z.array(GateNameSchema).optional(),
  tools: z.array(ToolNameSchema).optional(),
  checkpoint: z.boolean().optional(),
});

const GateRuleSchema = z.strictObject({
  roles: z.array(z.enum(roles)).min(1, "Name at least one role."),
  notSetBySameAs: z.array(GateNameSchema).optional(),
  description: TextSchema,
});

const RejectionSchema = z.strictObject({
  from: StateNameSchema,
  to: StateNameSchema,
  invariant: InvariantNameSchema,
  message: TextSchema,
});

export const WorkflowDefinitionDocumentSchema = z.strictObject({
  name: WorkflowNameSchema,
  version: z.number().int("A whole number.").min(1, "At least 1."),
  title: TextSchema,
  description: TextSchema,
  initial: StateNameSchema,
  states: z.record(StateNameSchema, StateSchema),
  transitions: z.array(TransitionSchema),
  fromAnyNonTerminal: z.array(TransitionSchema.omit({ from: true })).optional(),
  rejections: z.array(RejectionSchema),
  gates: z.partialRecord(GateNameSchema, GateRuleSchema).optional(),
  // Its problems are dataClassProblems', which name the pointer and the classes (validateWorkflowDefinition).
  data_classes: z.record(z.string(), z.enum(dataClasses)).optional(),
});

/**
 * Only the parts the graph checks read, loosely: a document whose role is
 * misspelled still gets told that a state is unreachable, so one round of
 * fixes can address everything.
 */
const GraphSkeletonSchema = z.looseObject({
  initial: z.string(),
  states: z.record(z.string(), z.looseObject({ terminal: z.unknown().optional(), success: z.unknown().optional() })),
  transitions: z.array(z.looseObject({ from: z.string(), to: z.string() })),
  fromAnyNonTerminal: z.array(z.looseObject({ to: z.string() })).optional(),
  rejections: z.array(z.looseObject({ from: z.string(), to: z.string() })),
});
type GraphSkeleton = z.infer<typeof GraphSkeletonSchema>;

export interface ValidationOptions {
  /**
   * The tools a state may name. Left out, tool names are checked for their
   * form only: the model does not know the tool registry, its caller does.
   */
  knownTools?: readonly string[];
}

export function validateWorkflowDefinition(doc: unknown, options: ValidationOptions = {}): WorkflowValidation {
  const shape = WorkflowDefinitionDocumentSchema.safeParse(doc);
  const problems = shape.success
    ? []
    : shape.error.issues
        .flatMap((issue) => problemsOfIssue(issue, doc))
        .filter((p) => !p.path.startsWith("$.data_classes"));
  if (options.knownTools) problems.push(...unknownTools(doc, options.knownTools));
  problems.push(...declaredClassProblems(doc));
  const skeleton = GraphSkeletonSchema.safeParse(doc);
  const warnings: Problem[] = [];
  if (skeleton.success) {
    const graph = graphProblems(skeleton.data);
    // One problem per place: `"bad name"` as a state is an invalid name, not also an unreachable state.
    const shapePaths = new Set(problems.map((p) => p.path));
    problems.push(...graph.problems.filter((p) => !shapePaths.has(p.path)));
    warnings.push(...graph.warnings);
  }
  if (!shape.success || problems.length > 0) return { ok: false, problems, warnings };
  return { ok: true, definition: shape.data, warnings };
}

const problemCodeOfClass: Record<DataClassProblem["kind"], ProblemCode> = {
  not_a_map: "wrong_type",
  invalid_pointer: "invalid_pointer",
  unknown_class: "unknown_data_class",
};

/** A malformed pointer or an unknown class in `data_classes`, each named at its key. */
function declaredClassProblems(doc: unknown): Problem[] {
  const declared = (doc as { data_classes?: unknown } | null)?.data_classes;
  if (declared === undefined) return [];
  return dataClassProblems(declared, "$.data_classes").map((p) => {
    const code = problemCodeOfClass[p.kind];
    return { path: p.path, code, message: p.message };
  });
}

/** An edge with where it was declared: an expanded `fromAnyNonTerminal` edge points at its template. */
export interface DeclaredEdge {
  from: string;
  to: string;
  path: string;
}

/**
 * The edges the engine will see, in its order: `transitions`, then each
 * `fromAnyNonTerminal` entry from every non-terminal state other than its
 * target. This must stay the expansion `defineWorkflow` makes (a test
 * compares the two on every shipped definition).
 */
export function declaredEdges(doc: {
  states: Record<string, { terminal?: unknown }>;
  transitions: ReadonlyArray<{ from: string; to: string }>;
  fromAnyNonTerminal?: ReadonlyArray<{ to: string }>;
}): DeclaredEdge[] {
  const stateNames = Object.keys(doc.states);
  return [
    ...doc.transitions.map((t, i) => ({ from: t.from, to: t.to, path: `$.transitions[${i}]` })),
    ...(doc.fromAnyNonTerminal ?? []).flatMap((t, i) =>
      stateNames
        .filter((s) => doc.states[s]?.terminal !== true && s !== t.to)
        .map((from) => ({ from, to: t.to, path: `$.fromAnyNonTerminal[${i}]` })),
    ),
  ];
}

function graphProblems(doc: GraphSkeleton): { problems: Problem[]; warnings: Problem[] } {
  const problems: Problem[] = [];
  const warnings: Problem[] = [];
  const states = doc.states;
  const known = (s: string) => Object.hasOwn(states, s);
  const isTerminal = (s: string) => states[s]?.terminal === true;
  const stateNames = Object.keys(states);
  const unknown = (path: string, name: string, what: string) =>
    problems.push({
      path,
      code: "unknown_state",
      message: `${what} names the state "${name}", which is not among the definition's states.`,
    });

  if (!known(doc.initial)) unknown("$.initial", doc.initial, "The initial state");
  doc.transitions.forEach((t, i) => {
    if (!known(t.from)) unknown(`$.transitions[${i}].from`, t.from, "This edge");
    if (!known(t.to)) unknown(`$.transitions[${i}].to`, t.to, "This edge");
  });
  (doc.fromAnyNonTerminal ?? []).forEach((t, i) => {
    if (!known(t.to)) unknown(`$.fromAnyNonTerminal[${i}].to`, t.to, "This edge");
  });
  doc.rejections.forEach((r, i) => {
    if (!known(r.from)) unknown(`$.rejections[${i}].from`, r.from, "This rejection");
    if (!known(r.to)) unknown(`$.rejections[${i}].to`, r.to, "This rejection");
  });

  for (const [name, state] of Object.entries(states)) {
    if (state.success === true && state.terminal !== true)
      problems.push({
        path: `${statePath(name)}.success`,
        code: "success_not_terminal",
        message: `${name} is marked as success but is not terminal: success means the work has ended well.`,
      });
  }

  doc.transitions.forEach((t, i) => {
    if (isTerminal(t.from))
      problems.push({
        path: `$.transitions[${i}].from`,
        code: "terminal_has_edges",
        message: `${t.from} is terminal: a task that has ended cannot move on to ${t.to}.`,
      });
  });

  const edges = declaredEdges(doc);
  // Two edges with the same ends are a duplicate even when their `by` lists
  // (or guards) differ: the engine looks an edge up by its ends alone and
  // takes the first, so the second's actors and guards would silently never
  // apply. Who may take an edge is said once, on one edge.
  const firstEdge = new Map<string, DeclaredEdge>();
  for (const e of edges) {
    const key = `${e.from}\u0000${e.to}`;
    const first = firstEdge.get(key);
    if (!first) firstEdge.set(key, e);
    else
      problems.push({
        path: e.path,
        code: "duplicate_edge",
        message: `The edge ${e.from} → ${e.to} is already declared at ${first.path}; the engine would only ever use that one.`,
      });
  }

  doc.rejections.forEach((r, i) => {
    const edge = firstEdge.get(`${r.from}\u0000${r.to}`);
    if (edge)
      problems.push({
        path: `$.rejections[${i}]`,
        code: "rejection_contradicts_edge",
        message: `${r.from} → ${r.to} is rejected here but allowed by the edge at ${edge.path}: it cannot be both.`,
      });
  });

  const terminals = stateNames.filter(isTerminal);
  if (terminals.length === 0)
    problems.push({
      path: "$.states",
      code: "no_terminal_state",
      message: "No state is terminal: a task of this workflow could never end.",
    });

  const knownEdges = edges.filter((e) => known(e.from) && known(e.to));
  // From an unknown initial state everything would be unreachable: that one problem says it all.
  if (known(doc.initial)) {
    const reached = closure([doc.initial], knownEdges, "forward");
    for (const s of stateNames)
      if (!reached.has(s))
        problems.push({
          path: statePath(s),
          code: "unreachable_state",
          message: `No path of edges leads from the initial state ${doc.initial} to ${s}.`,
        });
  }
  // With no terminal state at all, every state would be reported here; no_terminal_state already says why.
  if (terminals.length > 0) {
    const canEnd = closure(terminals, knownEdges, "backward");
    for (const s of stateNames)
      if (!canEnd.has(s))
        problems.push({
          path: statePath(s),
          code: "no_path_to_terminal",
          message: `A task in ${s} could never end: no path of edges leads from it to a terminal state.`,
        });
  }

  // A warning, not an error: nothing in the engine needs a success state (the
  // completion invariants apply on entering one, if there is one), and a flow
  // whose every end is neutral, say a review that is only ever closed, is
  // legitimate. But such a flow never reports success, which for a flow like
  // agent-task is almost certainly a forgotten `success: true`.
  if (!stateNames.some((s) => isTerminal(s) && states[s]?.success === true))
    warnings.push({
      path: "$.states",
      code: "no_success_state",
      message: "No terminal state is marked success: no task of this workflow can ever be reported as succeeded.",
    });

  return { problems, warnings };
}

/** Read loosely, like the graph: a misspelled role elsewhere does not hide an unknown tool. */
function unknownTools(doc: unknown, knownTools: readonly string[]): Problem[] {
  const states = valueAt(doc, ["states"]);
  if (states === null || typeof states !== "object" || Array.isArray(states)) return [];
  return Object.entries(states as Record<string, unknown>).flatMap(([name, state]) => {
    const tools = valueAt(state, ["tools"]);
    if (!Array.isArray(tools)) return [];
    return tools.flatMap((tool: unknown, i) =>
      typeof tool !== "string" || knownTools.includes(tool)
        ? []
        : [
            {
              path: `${statePath(name)}.tools[${i}]`,
              code: "unknown_tool" as const,
              message: `"${tool}" is not a registered tool. The tools are ${knownTools.join(", ") || "none"}.`,
            },
          ],
    );
  });
}

function closure(start: string[], edges: DeclaredEdge[], direction: "forward" | "backward"): Set<string> {
  const seen = new Set(start);
  const queue = [...start];
  for (let s = queue.shift(); s !== undefined; s = queue.shift()) {
    for (const e of edges) {
      const [here, there] = direction === "forward" ? [e.from, e.to] : [e.to, e.from];
      if (here === s && !seen.has(there)) (seen.add(there), queue.push(there));
    }
  }
  return seen;
}

function problemsOfIssue(issue: z.core.$ZodIssue, doc: unknown): Problem[] {
  const path = issue.path;
  const at = jsonPath(path);
  switch (issue.code) {
    case "unrecognized_keys":
      // The gates record's keys are gate names: a key outside them is a rule for a gate that does not exist.
      if (path.length === 1 && path[0] === "gates")
        return issue.keys.map((key) => ({
          path: jsonPath([...path, key]),
          code: "unknown_gate",
          message: `"${key}" is not a gate. The gates are ${gateNames.join(", ")}.`,
        }));
      return issue.keys.map((key) => ({
        path: jsonPath([...path, key]),
        code: "unknown_field",
        message: `"${key}" is not part of a workflow definition${path.length ? ` at ${at}` : ""}.`,
      }));
    case "invalid_union":
      if (issue.discriminator === "kind")
        return [
          {
            path: at,
            code: "unknown_guard",
            message: `${describe(valueAt(doc, path))} is not a guard. The guards are ${guardKinds.join(", ")}.`,
          },
        ];
      return [{ path: at, code: "invalid_value", message: "This value matches none of the allowed forms." }];
    case "invalid_value":
      return [invalidValue(issue.values, at, valueAt(doc, path))];
    case "invalid_key":
      return [
        {
          path: at,
          code: "invalid_name",
          message: `"${String(path.at(-1))}" is not a valid name: ${issue.issues.map((i) => i.message).join(" ")}`,
        },
      ];
    case "invalid_format":
      return [
        {
          path: at,
          code: "invalid_name",
          message: `${describe(valueAt(doc, path))} is not a valid name: ${issue.message}`,
        },
      ];
    case "invalid_type": {
      if (valueAt(doc, path) === undefined)
        return [{ path: at, code: "missing_field", message: `${at} is required (${article(issue.expected)}).` }];
      return [
        {
          path: at,
          code: "wrong_type",
          message: `Expected ${article(issue.expected)}, found ${describe(valueAt(doc, path))}.`,
        },
      ];
    }
    case "too_small":
      return [{ path: at, code: "too_small", message: issue.message }];
    case "too_big":
      return [{ path: at, code: "too_big", message: issue.message }];
    default:
      return [{ path: at, code: "invalid_value", message: issue.message }];
  }
}

function invalidValue(values: readonly unknown[], path: string, found: unknown): Problem {
  const same = (list: readonly string[]) => list.length === values.length && list.every((v) => values.includes(v));
  if (same(gateNames))
    return {
      path,
      code: "unknown_gate",
      message: `${describe(found)} is not a gate. The gates are ${gateNames.join(", ")}.`,
    };
  if (same(roles))
    return {
      path,
      code: "unknown_role",
      message: `${describe(found)} is not a role. The roles are ${roles.join(", ")}.`,
    };
  if (same(artifactNames))
    return {
      path,
      code: "unknown_artifact",
      message: `${describe(found)} is not an artifact. The artifacts are ${artifactNames.join(", ")}.`,
    };
  if (same(actorKinds))
    return {
      path,
      code: "unknown_actor",
      message: `${describe(found)} is not who may take an edge. That is one of ${actorKinds.join(", ")}.`,
    };
  return {
    path,
    code: "invalid_value",
    message: `${describe(found)} is not allowed here: one of ${values.join(", ")}.`,
  };
}

/** `$.states.RUNNING`, or `$.states["waiting for tool"]` for a key that is not an identifier. */
function jsonPath(path: readonly PropertyKey[]): string {
  return path.reduce<string>((out, key) => {
    if (typeof key === "number") return `${out}[${key}]`;
    const name = String(key);
    return /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) ? `${out}.${name}` : `${out}[${JSON.stringify(name)}]`;
  }, "$");
}

function statePath(name: string): string {
  return jsonPath(["states", name]);
}

function valueAt(doc: unknown, path: readonly PropertyKey[]): unknown {
  let value = doc;
  for (const key of path) {
    if (value === null || typeof value !== "object" || !Object.hasOwn(value, key)) return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}

function describe(value: unknown): string {
  if (value === undefined) return "nothing";
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "object") return "an object";
  if (typeof value === "string") return JSON.stringify(value);
  return `${typeof value} ${String(value)}`;
}

function article(expected: string): string {
  return /^[aeiou]/.test(expected) ? `an ${expected}` : `a ${expected}`;
}
