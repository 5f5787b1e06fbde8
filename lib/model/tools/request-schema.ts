import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import addFormats from "ajv-formats";
import { digestOf } from "@/lib/core/canonical-json";

/**
 * A registered tool's request schema is JSON Schema (draft-07), checked by
 * Ajv: a team describes its tool in the format its own tooling already
 * speaks, and every error names the field. Strict mode refuses unknown
 * keywords, so a typo in a schema (`"minimun"`) is a registration error, not
 * a constraint silently not enforced on a hostile agent's request.
 */

const ajv = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true });
addFormats(ajv);

export interface SchemaProblem {
  /** Dotted path inside the schema or the request, e.g. `properties.amount_cents.type` or `amount_cents`. */
  field: string;
  message: string;
}

/** Why the schema cannot be used (not valid JSON Schema, or it does not compile); empty when it can. */
export function schemaProblems(schema: unknown): SchemaProblem[] {
  if (schema === null || typeof schema !== "object" || Array.isArray(schema))
    return [{ field: "", message: "A request schema is a JSON Schema object." }];
  if (!ajv.validateSchema(schema)) {
    // The meta-schema reports one mistake several ways (an enum, then each branch of an anyOf): the first says it best.
    const byField = new Map<string, SchemaProblem>();
    for (const e of ajv.errors ?? []) {
      const field = dotted(e.instancePath);
      if (!byField.has(field)) byField.set(field, { field, message: e.message ?? "invalid" });
    }
    return [...byField.values()];
  }
  try {
    compiled(schema as Record<string, unknown>);
    return [];
  } catch (error) {
    return [{ field: "", message: error instanceof Error ? error.message : String(error) }];
  }
}

// Compiling is the expensive part; a version's schema never changes, so one compilation per distinct schema.
const validators = new Map<string, ValidateFunction>();

function compiled(schema: Record<string, unknown>): ValidateFunction {
  const key = digestOf(schema);
  let validate = validators.get(key);
  if (!validate) {
    validate = ajv.compile(schema);
    validators.set(key, validate);
  }
  return validate;
}

/** The request's problems against a (valid) schema, each at the request field it concerns; empty when it conforms. */
export function requestProblems(schema: Record<string, unknown>, request: unknown): SchemaProblem[] {
  const validate = compiled(schema);
  if (validate(request)) return [];
  return (validate.errors ?? []).map((e) => ({ field: fieldOf(e), message: e.message ?? "invalid" }));
}

function fieldOf(e: ErrorObject): string {
  const base = dotted(e.instancePath);
  const params = e.params as { missingProperty?: string; additionalProperty?: string };
  const child = params.missingProperty ?? params.additionalProperty;
  return child === undefined ? base : base ? `${base}.${child}` : child;
}

function dotted(instancePath: string): string {
  return instancePath
    .split("/")
    .slice(1)
    .map((t) => t.replace(/~1/g, "/").replace(/~0/g, "~"))
    .join(".");
}
