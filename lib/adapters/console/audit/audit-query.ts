import { z } from "zod";
import { isAppError, type FieldError } from "@/lib/core/errors";
import {
  assertSearchWindow,
  AuditSearchSchema,
  auditOrders,
  TaskHistoryQuerySchema,
  type AuditOrder,
  type AuditSearch,
  type TaskHistoryQuery,
} from "@/lib/use-cases/audit/audit-search";

/**
 * The audit pages' URLs are their state: every filter of /audit and of a
 * task's history lives in the query string, so a search can be bookmarked,
 * shared and reloaded. The console sends what its form holds: empty fields
 * are left out, and a `datetime-local` value (no zone) is read as UTC, the
 * zone every time in the console is shown in.
 */

/** The raw text of each filter, as the form shows it back. */
export const auditSearchFields = [
  "from",
  "to",
  "task",
  "actor",
  "action",
  "kind",
  "status",
  "tool",
  "idempotency_key",
  "execution",
  "scope",
  "order",
  "cursor",
] as const;
export type AuditSearchField = (typeof auditSearchFields)[number];
export type AuditSearchParams = Partial<Record<AuditSearchField, string>>;

export const auditFieldLabels: Record<string, string> = {
  from: "From",
  to: "To",
  task: "Task",
  actor: "Actor",
  action: "Action",
  kind: "Kind of event",
  status: "Status",
  tool: "Tool",
  idempotency_key: "Idempotency key",
  execution: "Execution id",
  scope: "Scope",
  order: "Order",
  cursor: "Page",
  limit: "Page size",
};

const localDateTime = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?$/;

/** A `datetime-local` value as an ISO instant in UTC; anything else unchanged (and judged by the schema). */
export function utcInstant(value: string): string {
  if (!localDateTime.test(value)) return value;
  return `${value.length === 16 ? `${value}:00` : value}Z`;
}

/** `2026-11-30T15:04:05.000Z` → `2026-11-30T15:04:05` for a datetime-local input. */
export function toLocalInput(iso: string | undefined): string {
  if (!iso) return "";
  const m = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})/.exec(iso);
  return m ? m[1]! : iso;
}

export function rawParams(
  searchParams: Record<string, string | string[] | undefined>,
  fields: readonly string[] = auditSearchFields,
): AuditSearchParams {
  const out: Record<string, string> = {};
  for (const key of fields) {
    const v = searchParams[key];
    const value = (Array.isArray(v) ? v.filter((x) => x.trim() !== "").join(",") : v)?.trim();
    if (value) out[key] = value;
  }
  return out as AuditSearchParams;
}

/** Each issue in words a person reads, by the query parameter it is about ("" for unknown ones). */
function wordsOf(issues: z.core.$ZodIssue[]): FieldError[] {
  return issues.map((i) => {
    const field = String(i.path[0] ?? "");
    const label = auditFieldLabels[field] ?? field;
    let message = i.message;
    if (field === "from" || field === "to") message = "must be a date and time, e.g. 2026-11-30T14:00 (UTC)";
    if (i.code === "invalid_value" && field === "kind") message = `unknown kind of event`;
    if (i.code === "invalid_value" && field === "action") message = "unknown action";
    if (i.code === "unrecognized_keys")
      return { field, message: `Unknown filter: ${(i as { keys?: string[] }).keys?.join(", ") ?? ""}` };
    return { field, message: label ? `${label}: ${message}` : message };
  });
}

const toBeforeFrom: FieldError = { field: "to", message: "To: must be later than From" };

const ConsoleSearchSchema = AuditSearchSchema.extend({
  order: z.enum(auditOrders).default("desc"),
  cursor: z.string().max(512).optional(),
});

export type ParsedAuditSearch =
  { ok: true; query: AuditSearch; order: AuditOrder; cursor: string | undefined } | { ok: false; errors: string[] };

/** The /audit page's filters, or what is wrong with them in words. */
export function parseAuditSearchParams(params: AuditSearchParams): ParsedAuditSearch {
  const input: Record<string, string> = { ...params };
  if (input.from) input.from = utcInstant(input.from);
  if (input.to) input.to = utcInstant(input.to);
  const parsed = ConsoleSearchSchema.safeParse(input);
  if (!parsed.success) return { ok: false, errors: wordsOf(parsed.error.issues).map((e) => e.message) };
  const { order, cursor, ...query } = parsed.data;
  try {
    assertSearchWindow(query);
  } catch (error) {
    if (isAppError(error)) return { ok: false, errors: [toBeforeFrom.message] };
    throw error;
  }
  return { ok: true, query, order, cursor };
}

/** `errors` name the query parameter each is about: the JSON route answers them as a problem's field errors. */
export type ParsedTaskHistory = { ok: true; query: TaskHistoryQuery } | { ok: false; errors: FieldError[] };

/** A task history page's filters (the JSON route's query string), or what is wrong with them in words. */
export function parseTaskHistoryParams(params: Record<string, string>): ParsedTaskHistory {
  const input: Record<string, string> = { ...params };
  if (input.from) input.from = utcInstant(input.from);
  if (input.to) input.to = utcInstant(input.to);
  const parsed = TaskHistoryQuerySchema.safeParse(input);
  if (!parsed.success) return { ok: false, errors: wordsOf(parsed.error.issues) };
  if (parsed.data.from && parsed.data.to && parsed.data.to <= parsed.data.from)
    return { ok: false, errors: [toBeforeFrom] };
  return { ok: true, query: parsed.data };
}

export function auditSearchHref(params: AuditSearchParams): string {
  const search = new URLSearchParams();
  for (const key of auditSearchFields) {
    const value = params[key];
    if (value) search.set(key, value);
  }
  const query = search.toString();
  return query ? `/audit?${query}` : "/audit";
}

/** The export of the current filters (never the page's cursor or order: an export is the whole match, oldest first). */
export function auditExportHref(params: AuditSearchParams, format: "csv" | "jsonl"): string {
  const search = new URLSearchParams({ format });
  for (const key of auditSearchFields) {
    if (key === "cursor" || key === "order") continue;
    const value = params[key];
    if (!value) continue;
    search.set(key, key === "from" || key === "to" ? utcInstant(value) : value);
  }
  return `/api/v1/audit/export?${search.toString()}`;
}

export function hasAuditFilters(params: AuditSearchParams): boolean {
  return auditSearchFields.some((k) => k !== "cursor" && k !== "order" && k !== "scope" && params[k]);
}
