import { dataClasses, isDataClass, rankOf, type DataClass } from "@/lib/model/data-classes";
import { dataClassesOfTool } from "@/lib/model/tools/built-in-tools";
import type { ToolDefinition } from "@/lib/model/tools/tool-definition";

/**
 * Which data classes a task's data holds, read from the `data_classes`
 * declarations of workflow and tool definitions (lib/model/data-classes.ts;
 * docs/retention.md, "Per tenant and per data class"). Pure: the retention
 * run gives it the definitions stored in the registries.
 *
 * Read defensively, on purpose: older definitions have none, and a
 * definition is data someone registered. Anything not understood counts as
 * undeclared, and undeclared data — free text, provider payloads — is
 * confidential, so a malformed declaration can only keep data longer, never
 * shorten its term.
 */

export { dataClasses, isDataClass, type DataClass };

/** Sensitivity order: a task's term is that of the most sensitive class it holds. */
export const dataClassRank: Record<DataClass, number> = {
  public: rankOf("public"),
  internal: rankOf("internal"),
  confidential: rankOf("confidential"),
  restricted: rankOf("restricted"),
};

/** What undeclared data counts as. */
export const UNDECLARED_CLASS: DataClass = "confidential";

/**
 * The most sensitive class one `Record<jsonPointer, class>` declares, and
 * whether it covers its document whole (the root pointer ""): a document
 * declared only in part still holds undeclared, confidential, data.
 */
function readDeclaration(declaration: unknown): DataClass {
  if (typeof declaration !== "object" || declaration === null || Array.isArray(declaration)) return UNDECLARED_CLASS;
  const entries = Object.entries(declaration as Record<string, unknown>);
  let most: DataClass | null = null;
  for (const [, value] of entries) {
    if (!isDataClass(value)) return UNDECLARED_CLASS;
    if (most === null || dataClassRank[value] > dataClassRank[most]) most = value;
  }
  const whole = "" in (declaration as Record<string, unknown>);
  if (most === null) return UNDECLARED_CLASS;
  return whole || dataClassRank[most] >= dataClassRank[UNDECLARED_CLASS] ? most : UNDECLARED_CLASS;
}

function field(value: unknown, name: string): unknown {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)[name]
    : undefined;
}

/** The most sensitive class a workflow definition's task documents hold (`data_classes`). */
export function workflowDataClass(definition: unknown): DataClass {
  return readDeclaration(field(definition, "data_classes"));
}

/** The most sensitive class a tool's calls leave behind: its request, result and evidence (`data_classes`). */
export function toolDataClass(definition: unknown): DataClass {
  // A built-in's classes sit beside its definition (its digest predates them): dataClassesOfTool reads both.
  const named = typeof field(definition, "name") === "string" && typeof field(definition, "version") === "number";
  const declared = named ? dataClassesOfTool(definition as ToolDefinition) : field(definition, "data_classes");
  return mostSensitive(["request", "result", "evidence"].map((part) => readDeclaration(field(declared, part))));
}

export function mostSensitive(classes: readonly DataClass[]): DataClass {
  return classes.reduce<DataClass>((a, b) => (dataClassRank[b] > dataClassRank[a] ? b : a), "public");
}
