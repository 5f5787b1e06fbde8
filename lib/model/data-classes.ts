/**
 * How sensitive each field of what Verity keeps is: a task's state, a
 * checkpoint's payload, a tool call's request, result and evidence, an
 * instruction's text, a review's reasons. Workflow and tool definitions
 * declare classes by JSON pointer (`data_classes`); what they leave out
 * takes a safe default, so a definition that says nothing still keeps free
 * text and provider payloads confidential. Restricted values are masked for
 * everyone without clearance (lib/model/clearance.ts), on the server, in
 * the API and the console alike (docs/encryption.md "Data classes").
 */

/** Least to most sensitive: the order decides which of two classes a value takes. */
export const dataClasses = ["public", "internal", "confidential", "restricted"] as const;
export type DataClass = (typeof dataClasses)[number];

/** JSON pointer (into the task state, or into a request / result / evidence) → class. `*` matches any one key or index. */
export type DataClassMap = Record<string, DataClass>;

/** What a tool definition declares; the retention code reads these same optional fields. */
export interface ToolDataClasses {
  request?: DataClassMap;
  result?: DataClassMap;
  evidence?: DataClassMap;
}

/** What a masked value reads on the wire and on screen. */
export const MASKED_VALUE = "[restricted]";

/**
 * Free text (artifacts, subtask titles, instruction text, review reasons)
 * can hold anything a person or an agent typed, customers' names included:
 * confidential unless a definition says otherwise.
 */
export const FREE_TEXT_CLASS: DataClass = "confidential";

/**
 * A provider's payload field nobody declared: confidential, because Verity
 * cannot know what a registered tool's provider sends back.
 */
export const UNDECLARED_PAYLOAD_CLASS: DataClass = "confidential";

/**
 * The task state's own fields, which every workflow shares: gates, status,
 * budget, agent lists and ids are how work is run and are internal; the
 * free text is confidential. A workflow's `data_classes` is laid over this.
 */
export const taskStateDefaultClasses: DataClassMap = {
  "/artifacts": FREE_TEXT_CLASS,
  "/subtasks/*/title": FREE_TEXT_CLASS,
};
const TASK_STATE_FALLBACK: DataClass = "internal";

export function isDataClass(value: unknown): value is DataClass {
  return typeof value === "string" && (dataClasses as readonly string[]).includes(value);
}

export function rankOf(c: DataClass): number {
  return dataClasses.indexOf(c);
}

/** The more sensitive of two classes. */
export function higherClass(a: DataClass, b: DataClass): DataClass {
  return rankOf(a) >= rankOf(b) ? a : b;
}

export interface DataClassProblem {
  path: string;
  kind: "not_a_map" | "invalid_pointer" | "unknown_class";
  message: string;
}

/**
 * What is wrong with a declaration map, each problem at its JSON path under
 * `path` (`$.data_classes["/customer_id"]`): a non-object, a key that is not
 * an RFC 6901 pointer, a class that is not one of the four.
 */
export function dataClassProblems(map: unknown, path: string): DataClassProblem[] {
  if (map === null || typeof map !== "object" || Array.isArray(map))
    return [
      { path, kind: "not_a_map", message: 'An object of JSON pointer → class, e.g. {"/customer_id": "restricted"}.' },
    ];
  const problems: DataClassProblem[] = [];
  for (const [pointer, cls] of Object.entries(map)) {
    const at = `${path}[${JSON.stringify(pointer)}]`;
    if (!isPointer(pointer))
      problems.push({
        path: at,
        kind: "invalid_pointer",
        message: `${JSON.stringify(pointer)} is not a JSON pointer: "/" then keys separated by "/", "~" only as ~0 or ~1 (e.g. /customer_id).`,
      });
    if (!isDataClass(cls))
      problems.push({
        path: at,
        kind: "unknown_class",
        message: `${JSON.stringify(cls)} is not a data class. The classes are ${dataClasses.join(", ")}.`,
      });
  }
  return problems;
}

function isPointer(pointer: string): boolean {
  return pointer.length <= 256 && /^(\/([^/~]|~[01])*)+$/.test(pointer);
}

function tokensOf(pointer: string): string[] {
  return pointer
    .slice(1)
    .split("/")
    .map((t) => t.replace(/~1/g, "/").replace(/~0/g, "~"));
}

function pointerOf(tokens: readonly string[]): string {
  return tokens.map((t) => "/" + t.replace(/~/g, "~0").replace(/\//g, "~1")).join("");
}

/** The class of the value at `tokens`: the deepest declaration that is a prefix of it, else `fallback`. */
export type Classifier = (tokens: readonly string[]) => DataClass;

/**
 * A classifier over one or more maps (later maps win over earlier ones at
 * the same depth, so a definition's declaration overrides a default at its
 * own pointer). The deepest matching declaration wins: `/artifacts` covers
 * `/artifacts/test_results` until that pointer is declared itself.
 */
export function classifierOf(maps: ReadonlyArray<DataClassMap | undefined>, fallback: DataClass): Classifier {
  const declared = maps.flatMap((m) =>
    Object.entries(m ?? {}).map(([pointer, cls]) => ({ tokens: tokensOf(pointer), cls })),
  );
  return (tokens) => {
    let best: { depth: number; cls: DataClass } | null = null;
    for (const d of declared) {
      if (d.tokens.length > tokens.length) continue;
      if (!d.tokens.every((t, i) => t === "*" || t === tokens[i])) continue;
      if (!best || d.tokens.length >= best.depth) best = { depth: d.tokens.length, cls: d.cls };
    }
    return best?.cls ?? fallback;
  };
}

/** The class of one pointer under a classifier. */
export function classOfPointer(classify: Classifier, pointer: string): DataClass {
  return classify(tokensOf(pointer));
}

/** The task state's classifier: the shared defaults, then the workflow's declarations. */
export function taskStateClassifier(declared: DataClassMap | undefined): Classifier {
  return classifierOf([taskStateDefaultClasses, declared], TASK_STATE_FALLBACK);
}

/** A request's, result's or evidence's classifier: the tool's declarations, everything else confidential. */
export function payloadClassifier(declared: DataClassMap | undefined): Classifier {
  return classifierOf([declared], UNDECLARED_PAYLOAD_CLASS);
}

export interface Masked<T> {
  value: T;
  /** The pointers whose values were replaced by MASKED_VALUE, in document order. */
  masked: string[];
}

/**
 * `value` with every restricted field replaced by MASKED_VALUE. A whole
 * subtree is masked at its highest restricted pointer; nothing else
 * changes, so an uncleared reader still sees the shape, the amounts and the
 * statuses they need to do their job. `prefix` places the pointers reported
 * (`/request` for an execution's request).
 */
export function maskRestricted<T>(value: T, classify: Classifier, prefix = ""): Masked<T> {
  const masked: string[] = [];
  const walk = (node: unknown, tokens: string[]): unknown => {
    if (tokens.length > 0 && classify(tokens) === "restricted") {
      masked.push(prefix + pointerOf(tokens));
      return MASKED_VALUE;
    }
    if (Array.isArray(node)) return node.map((item, i) => walk(item, [...tokens, String(i)]));
    if (node !== null && typeof node === "object")
      return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, walk(v, [...tokens, k])]));
    return node;
  };
  // The root itself is never masked: a declaration names a field ("" is not one), so the shape always shows.
  return { value: walk(value, []) as T, masked };
}

/**
 * The classes the leaves of `value` take, least to most sensitive, each
 * once: what a checkpoint records it contains. An empty object or list is
 * a leaf of its own pointer's class.
 */
export function classesIn(value: unknown, classify: Classifier): DataClass[] {
  const found = new Set<DataClass>();
  const walk = (node: unknown, tokens: string[]): void => {
    const entries: Array<[string, unknown]> = Array.isArray(node)
      ? node.map((v, i) => [String(i), v])
      : node !== null && typeof node === "object"
        ? Object.entries(node)
        : [];
    if (entries.length === 0) {
      if (node !== undefined) found.add(classify(tokens));
      return;
    }
    for (const [k, v] of entries) walk(v, [...tokens, k]);
  };
  walk(value, []);
  return dataClasses.filter((c) => found.has(c));
}
