import { z } from "zod";
import { dbFor } from "@/lib/db/client";
import { parseQuery } from "@/lib/adapters/api/context";
import { requireConsoleSession } from "@/lib/adapters/console/shared/json-route";
import { queryOf } from "@/lib/adapters/http/query";
import type { Permission } from "@/lib/model/permissions";
import {
  AlertExportQuerySchema,
  ExecutionExportQuerySchema,
  exportAlertList,
  exportExecutionList,
  exportTaskList,
  listExportContentTypes,
  listExportFormats,
  TaskExportQuerySchema,
} from "@/lib/use-cases/exports/list-exports";

/**
 * The console's list exports (`/api/console/{tasks,executions,alerts}/export`):
 * the page's own filters in the query string (empty fields left out, as the
 * page's links leave them), `format=csv|jsonl`, the session's person checked
 * for the list's permission and their tenant; a bad filter is a 400
 * problem+json naming the field, before a byte is sent. A read only, nothing
 * recorded: the same rows the page shows, so a GET (a download link) is safe.
 */
const lists = {
  tasks: { permission: "tasks:read", schema: TaskExportQuerySchema, run: exportTaskList },
  executions: { permission: "tasks:read", schema: ExecutionExportQuerySchema, run: exportExecutionList },
  alerts: { permission: "alerts:read", schema: AlertExportQuerySchema, run: exportAlertList },
} as const;

export type ExportableList = keyof typeof lists;

export async function listExportResponse(request: Request, list: ExportableList): Promise<Response> {
  const { permission, schema, run } = lists[list];
  const principal = await requireConsoleSession(permission as Permission);
  const query = Object.fromEntries(Object.entries(queryOf(request.url)).filter(([, v]) => v.trim() !== ""));
  const { format, ...filters } = parseQuery(
    (schema as z.ZodObject).extend({ format: z.enum(listExportFormats).default("csv") }),
    query,
  ) as { format: (typeof listExportFormats)[number] } & Record<string, string | undefined>;
  const stream = (run as (...args: unknown[]) => ReadableStream<Uint8Array>)(
    dbFor(principal),
    principal,
    filters,
    format,
  );
  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  return new Response(stream, {
    headers: {
      "Content-Type": listExportContentTypes[format],
      // The tenant in the name: the file holds one tenant's rows, and a file kept beside others says whose.
      "Content-Disposition": `attachment; filename="verity-${list}-${principal.tenantId}-${stamp}.${format}"`,
      "Cache-Control": "no-store",
    },
  });
}

/** The download link a list page offers: its current filters (empty ones left out) and a format. */
export function listExportHref(
  list: ExportableList,
  filters: Record<string, string | undefined>,
  format: (typeof listExportFormats)[number],
): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(filters)) if (v) q.set(k, v);
  q.set("format", format);
  return `/api/console/${list}/export?${q.toString()}`;
}
