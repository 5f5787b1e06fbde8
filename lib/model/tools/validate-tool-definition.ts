import { z } from "zod";
import type { ToolDefinition } from "@/lib/model/tools/tool-definition";
import { ToolNameSchema } from "@/lib/model/tools/tool-name";
import { pointerTokens, valueAtPointer } from "@/lib/model/tools/json-pointer";
import { schemaProblems } from "@/lib/model/tools/request-schema";
import { dataClasses, dataClassProblems } from "@/lib/model/data-classes";

/**
 * A tool definition as a registered JSON document: the strict shape of
 * ToolDefinition, then what the shape cannot say (the request schema
 * compiles; every pointer names a property the schema declares and
 * requires; the compensating tool exists). Every problem is reported at
 * once, each at its JSON path (`$.amount.amount_pointer`), in the form of
 * the workflow validator (lib/model/workflows/validate-definition.ts).
 */
export interface ToolProblem {
  path: string;
  message: string;
}

export type ToolValidation = { ok: true; definition: ToolDefinition } | { ok: false; problems: ToolProblem[] };

export interface ToolValidationOptions {
  /** Whether a tool of this name is registered (or built in): the compensating tool must be. */
  toolExists?: (name: string) => boolean;
  /** The built-in tools alone may use Verity's own connectors. */
  builtIn?: boolean;
}

// The instruction ledger's topic alphabet (lib/stores/instructions.ts InstructionTopicSchema).
const TopicSchema = z
  .string()
  .regex(/^[a-z][a-z0-9_.-]{0,63}$/, "1-64 lower-case letters, digits, _ . -, starting with a letter (e.g. refund).");
const PointerSchema = z
  .string()
  .max(256)
  .regex(/^(\/[^/]*)+$/, "A JSON pointer into the request, e.g. /amount_cents.");

const ReconciliationSchema = z.discriminatedUnion("method", [
  z.strictObject({ method: z.literal("connector") }),
  z.strictObject({
    method: z.literal("http"),
    url: z.url({ protocol: /^https?$/, error: "An http(s) URL." }).max(2000),
  }),
  z.strictObject({
    method: z.literal("worker"),
    // Long enough for a worker to be restarted; short enough that a person hears of it the same day.
    deadline_seconds: z
      .number()
      .int()
      .min(10)
      .max(7 * 24 * 3600),
  }),
  z.strictObject({ method: z.literal("manual") }),
]);

const ToolDefinitionShape = z.strictObject({
  name: ToolNameSchema,
  version: z.number().int().min(1).max(1_000_000),
  description: z.string().trim().min(1, "Must not be empty.").max(2000),
  irreversible: z.boolean(),
  request_schema: z.record(z.string(), z.unknown()),
  topic: TopicSchema,
  // A minute at least: shorter and an ordinary retry could fall outside it.
  idempotency_window_seconds: z
    .number()
    .int()
    .min(60)
    .max(366 * 24 * 3600),
  amount: z.strictObject({ amount_pointer: PointerSchema, currency_pointer: PointerSchema }).optional(),
  identity_fields: z.array(PointerSchema).max(32),
  max_attempts: z.number().int().min(1).max(10),
  compensating_tool: ToolNameSchema.optional(),
  compensation_request: z
    .record(
      z.string().regex(/^[a-z_][a-z0-9_]{0,63}$/, "A request field name: lower-case letters, digits and _."),
      z
        .string()
        .max(256)
        .regex(
          /^\/(request|result)(\/[^/]*)+$/,
          "A JSON pointer into the compensated execution: /request/… or /result/….",
        ),
    )
    .optional(),
  reconciliation: ReconciliationSchema,
  // A map's problems are dataClassProblems', which name the pointer and the classes (below).
  data_classes: z
    .strictObject({
      request: z.record(z.string(), z.enum(dataClasses)).optional(),
      result: z.record(z.string(), z.enum(dataClasses)).optional(),
      evidence: z.record(z.string(), z.enum(dataClasses)).optional(),
    })
    .optional(),
});

export function validateToolDefinition(doc: unknown, options: ToolValidationOptions = {}): ToolValidation {
  const shape = ToolDefinitionShape.safeParse(doc);
  if (!shape.success) {
    const problems = shape.error.issues
      .filter((issue) => !isInClassMap(issue.path))
      .flatMap((issue): ToolProblem[] =>
        issue.code === "unrecognized_keys"
          ? issue.keys.map((key) => ({
              path: jsonPath([...issue.path, key]),
              message: `"${key}" is not part of a tool definition.`,
            }))
          : [{ path: jsonPath(issue.path), message: messageOf(issue, doc) }],
      );
    // The schema's own problems are worth knowing in the same answer.
    const reported = new Set(problems.map((p) => p.path));
    problems.push(...declaredClassProblems(doc).filter((p) => !reported.has(p.path)));
    const schema = (doc as { request_schema?: unknown } | null)?.request_schema;
    if (schema && typeof schema === "object") problems.push(...requestSchemaProblems(schema));
    return { ok: false, problems };
  }
  const def = shape.data as ToolDefinition;
  const problems: ToolProblem[] = declaredClassProblems(doc);
  problems.push(...requestSchemaProblems(def.request_schema));
  const schemaUsable = problems.length === 0;
  if (schemaUsable && def.request_schema.type !== "object")
    problems.push({
      path: "$.request_schema.type",
      message: 'A request is a JSON object: the schema\'s type must be "object".',
    });
  if (schemaUsable) {
    if (def.amount) {
      problems.push(
        ...pointerProblems(def.request_schema, def.amount.amount_pointer, "$.amount.amount_pointer", ["integer"]),
      );
      problems.push(
        ...pointerProblems(def.request_schema, def.amount.currency_pointer, "$.amount.currency_pointer", ["string"]),
      );
    }
    def.identity_fields.forEach((p, i) =>
      problems.push(...pointerProblems(def.request_schema, p, `$.identity_fields[${i}]`)),
    );
  }
  if (def.irreversible && def.identity_fields.length === 0)
    problems.push({
      path: "$.identity_fields",
      message:
        "An irreversible tool names at least one request field its provider's record must repeat; otherwise any record under the key would pass as this effect.",
    });
  const seen = new Set<string>();
  def.identity_fields.forEach((p, i) => {
    if (seen.has(p)) problems.push({ path: `$.identity_fields[${i}]`, message: `${p} is listed twice.` });
    seen.add(p);
  });
  if (def.compensating_tool !== undefined) {
    if (def.compensating_tool === def.name)
      problems.push({ path: "$.compensating_tool", message: "A tool cannot compensate itself." });
    else if (options.toolExists && !options.toolExists(def.compensating_tool))
      problems.push({ path: "$.compensating_tool", message: `${def.compensating_tool} is not a registered tool.` });
  }
  if (def.compensation_request !== undefined) {
    if (def.compensating_tool === undefined)
      problems.push({
        path: "$.compensation_request",
        message: "A compensation request needs a compensating_tool to send it to.",
      });
    // What the effect's request holds is known from its schema; its result is the provider's, unchecked until used.
    else if (schemaUsable)
      for (const [field, pointer] of Object.entries(def.compensation_request))
        if (pointer.startsWith("/request/"))
          problems.push(
            ...pointerProblems(def.request_schema, pointer.slice("/request".length), `$.compensation_request.${field}`),
          );
  }
  if (def.reconciliation.method === "connector" && !options.builtIn)
    problems.push({
      path: "$.reconciliation.method",
      message:
        'Only the built-in tools are reconciled through Verity\'s own connectors; use "http", "worker" or "manual".',
    });
  return problems.length === 0 ? { ok: true, definition: def } : { ok: false, problems };
}

/** An issue inside one of data_classes' maps: dataClassProblems words it, at the pointer. */
function isInClassMap(path: readonly PropertyKey[]): boolean {
  return path.length > 2 && path[0] === "data_classes";
}

/** Every pointer of `data_classes` well formed and every class one of the four. */
function declaredClassProblems(doc: unknown): ToolProblem[] {
  const declared = (doc as { data_classes?: unknown } | null)?.data_classes;
  if (declared === null || typeof declared !== "object") return [];
  return (["request", "result", "evidence"] as const).flatMap((part) => {
    const map = (declared as Record<string, unknown>)[part];
    return map === undefined ? [] : dataClassProblems(map, `$.data_classes.${part}`);
  });
}

function requestSchemaProblems(schema: object): ToolProblem[] {
  return schemaProblems(schema).map((p) => ({
    path: p.field ? `$.request_schema.${p.field}` : "$.request_schema",
    message: p.message,
  }));
}

/**
 * The pointer must name a property the schema declares at every level and
 * requires, so a request can never simply leave the amount out (four eyes
 * reads it: a hostile agent omitting it must be refused, not waved through
 * as "no money"), and, when `types` is given, of one of those types.
 */
function pointerProblems(
  schema: Record<string, unknown>,
  pointer: string,
  path: string,
  types?: string[],
): ToolProblem[] {
  const tokens = pointerTokens(pointer) ?? [];
  let at: Record<string, unknown> = schema;
  for (const token of tokens) {
    const properties = at.properties as Record<string, unknown> | undefined;
    const next = properties && Object.hasOwn(properties, token) ? properties[token] : undefined;
    if (!next || typeof next !== "object")
      return [{ path, message: `The request schema declares no property ${pointer} (no "${token}" at its level).` }];
    const required = Array.isArray(at.required) ? (at.required as unknown[]) : [];
    if (!required.includes(token))
      return [
        {
          path,
          message: `The request schema must require "${token}" for ${pointer}: a request without it could not be checked.`,
        },
      ];
    at = next as Record<string, unknown>;
  }
  if (types && !types.includes(String(at.type)))
    return [
      {
        path,
        message: `${pointer} must be of type ${types.join(" or ")} in the request schema (it is ${JSON.stringify(at.type ?? "untyped")}).`,
      },
    ];
  return [];
}

function jsonPath(path: readonly PropertyKey[]): string {
  return path.reduce<string>((acc, k) => (typeof k === "number" ? `${acc}[${k}]` : `${acc}.${String(k)}`), "$");
}

function messageOf(issue: z.core.$ZodIssue, doc: unknown): string {
  if (issue.code === "invalid_type") {
    const present = issue.path.length === 0 ? doc : valueAtPointer(doc, "/" + issue.path.map(String).join("/"));
    if (present === undefined) return `Required (${issue.expected}).`;
    return `Expected ${issue.expected}.`;
  }
  if (issue.code === "invalid_union" && issue.path.at(-1) === "reconciliation")
    return 'Expected {"method":"http","url":…}, {"method":"worker","deadline_seconds":…} or {"method":"manual"}.';
  return issue.message;
}
