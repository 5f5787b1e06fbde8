import { z } from "zod";
import type { Db } from "@/lib/db/client";
import { csvLine } from "@/lib/core/csv";
import { keysetCursor, keysetParts } from "@/lib/core/keyset-cursor";
import type { Prisma } from "@/lib/generated/prisma/client";
import { ExecutionStatus } from "@/lib/generated/prisma/enums";
import { requirePermission, type Permission, type Principal } from "@/lib/model/permissions";
import { ToolNameSchema } from "@/lib/model/tools/tool-name";
import { findReadableExecutionViews, type ExecutionView } from "@/lib/stores/execution-store";
import type { TaskView } from "@/lib/stores/tasks/task-views";
import { listTasks, ListTasksQuerySchema } from "@/lib/use-cases/tasks/list-tasks";
import { listAlerts, ListAlertsQuerySchema } from "@/lib/use-cases/alerts/alert-queries";
import { maskExecutionsForReader, maskTaskForReader } from "@/lib/use-cases/data-classes/mask-for-reader";
import type { DivergenceAlert } from "@/lib/generated/prisma/client";

/**
 * Exports of the console's lists (tasks, executions, alerts) as CSV or JSON
 * Lines (docs/search.md "Exports"): the same filters as the page, every
 * matching row (not one page), streamed one keyset page per pull so memory
 * stays flat and a client that stops reading stops the queries — the audit
 * export's pattern (lib/use-cases/audit/audit-export.ts). Each runs on the
 * caller's tenant connection after the list's permission is checked, and
 * restricted fields (a call's customer, a task state's restricted pointers)
 * are masked exactly as the pages mask them for a reader without clearance.
 */

export const listExportFormats = ["csv", "jsonl"] as const;
export type ListExportFormat = (typeof listExportFormats)[number];

export const listExportContentTypes: Record<ListExportFormat, string> = {
  csv: "text/csv; charset=utf-8",
  jsonl: "application/x-ndjson; charset=utf-8",
};

/** At most this many rows per export: a bound, stated in the file's last line when reached, never a silent cut. */
export const listExportRowCap = 100_000;
const pageSize = 200;

interface ListPage<T> {
  items: T[];
  nextCursor: string | null;
}

/** One list's export: the records' columns (CSV's header, JSON's keys, in order) and how a row becomes one. */
interface ExportShape<Row> {
  columns: readonly string[];
  record(row: Row): Record<string, unknown>;
}

function streamPages<Row>(
  fetchPage: (cursor: string | null) => Promise<ListPage<Row>>,
  shape: ExportShape<Row>,
  format: ListExportFormat,
): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let cursor: string | null = null;
  let started = false;
  let rows = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (!started && format === "csv") controller.enqueue(encoder.encode(csvLine(shape.columns)));
      if (started && cursor === null) return controller.close();
      started = true;
      const page = await fetchPage(cursor);
      const lines = page.items.map((row) => {
        const record = shape.record(row);
        return format === "csv" ? csvLine(shape.columns.map((c) => record[c])) : `${JSON.stringify(record)}\n`;
      });
      if (lines.length) controller.enqueue(encoder.encode(lines.join("")));
      rows += page.items.length;
      cursor = page.nextCursor;
      if (cursor !== null && rows >= listExportRowCap) {
        // Said in the file, so a cut export is never mistaken for a whole one.
        const note = `export stopped at ${listExportRowCap} rows: narrow the filters`;
        controller.enqueue(
          encoder.encode(format === "csv" ? csvLine([`# ${note}`]) : `${JSON.stringify({ truncated: note })}\n`),
        );
        cursor = null;
      }
      if (cursor === null) controller.close();
    },
  });
}

function allowed(principal: Principal, permission: Permission): void {
  requirePermission(principal, permission);
}

// ---------------------------------------------------------------------------
// Tasks
// ---------------------------------------------------------------------------

export const TaskExportQuerySchema = ListTasksQuerySchema.pick({ status: true, workflow: true, q: true, actor: true });
export type TaskExportQuery = z.input<typeof TaskExportQuerySchema>;

const taskShape: ExportShape<TaskView> = {
  columns: [
    "id",
    "workflow",
    "workflow_version",
    "status",
    "version",
    "intent_id",
    "created_at",
    "created_by",
    "updated_at",
    "updated_by",
    "state",
  ],
  record: (t) => ({
    id: t.id,
    workflow: t.workflow.name,
    workflow_version: t.workflow.version,
    status: t.status,
    version: t.version,
    intent_id: t.intentId,
    created_at: t.createdAt.toISOString(),
    created_by: t.createdBy,
    updated_at: t.updatedAt.toISOString(),
    updated_by: t.updatedBy,
    state: t.state,
  }),
};

/** Every task the list's filters select (status, workflow, id prefix), newest activity first, each state masked for the reader. */
export function exportTaskList(
  db: Db,
  principal: Principal,
  query: TaskExportQuery,
  format: ListExportFormat,
): ReadableStream<Uint8Array> {
  allowed(principal, "tasks:read");
  const filters = TaskExportQuerySchema.parse(query);
  return streamPages(
    async (cursor) => {
      const page = await listTasks(db, { ...filters, cursor: cursor ?? undefined, limit: pageSize });
      return { items: page.items.map((t) => maskTaskForReader(principal, t).value), nextCursor: page.nextCursor };
    },
    taskShape,
    format,
  );
}

// ---------------------------------------------------------------------------
// Executions
// ---------------------------------------------------------------------------

export const ExecutionExportQuerySchema = z.strictObject({
  status: z.enum(Object.values(ExecutionStatus) as [ExecutionStatus, ...ExecutionStatus[]]).optional(),
  tool: ToolNameSchema.optional(),
});
export type ExecutionExportQuery = z.input<typeof ExecutionExportQuerySchema>;

const executionShape: ExportShape<ExecutionView> = {
  columns: [
    "id",
    "task_id",
    "tool_call_id",
    "tool",
    "status",
    "attempt",
    "idempotency_key",
    "irreversible",
    "created_at",
    "updated_at",
    "sent_at",
    "settled_at",
    "request",
  ],
  record: (e) => ({
    id: e.id,
    task_id: e.taskId,
    tool_call_id: e.toolCallId,
    tool: e.tool,
    status: e.status,
    attempt: e.attempt,
    idempotency_key: e.idempotencyKey,
    irreversible: e.irreversible,
    created_at: e.createdAt.toISOString(),
    updated_at: e.updatedAt.toISOString(),
    sent_at: e.sentAt?.toISOString() ?? null,
    settled_at: e.settledAt?.toISOString() ?? null,
    request: e.request,
  }),
};

const executionCursor = keysetCursor([keysetParts.instant, keysetParts.text], {
  notOurs: "not a cursor of this export",
});

/** Every call the executions list's filters select, most recently changed first, each request masked for the reader. */
export function exportExecutionList(
  db: Db,
  principal: Principal,
  query: ExecutionExportQuery,
  format: ListExportFormat,
): ReadableStream<Uint8Array> {
  allowed(principal, "tasks:read");
  const filters = ExecutionExportQuerySchema.parse(query);
  return streamPages(
    async (cursor) => {
      const after = cursor ? executionCursor.decode(cursor) : null;
      const where: Prisma.ExecutionWhereInput = {
        ...(filters.status ? { status: filters.status } : {}),
        ...(filters.tool ? { tool: filters.tool } : {}),
        ...(after
          ? { updatedAt: { lte: after[0] }, OR: [{ updatedAt: { lt: after[0] } }, { id: { lt: after[1] } }] }
          : {}),
      };
      const rows = await findReadableExecutionViews(db, {
        where,
        orderBy: [{ updatedAt: "desc" }, { id: "desc" }],
        take: pageSize + 1,
      });
      const items = rows.slice(0, pageSize);
      const masked = (await maskExecutionsForReader(db, principal, items)).map((m) => m.value);
      const last = items[items.length - 1];
      return {
        items: masked,
        nextCursor: rows.length > pageSize && last ? executionCursor.encode([last.updatedAt, last.id]) : null,
      };
    },
    executionShape,
    format,
  );
}

// ---------------------------------------------------------------------------
// Alerts
// ---------------------------------------------------------------------------

export const AlertExportQuerySchema = ListAlertsQuerySchema.pick({
  status: true,
  severity: true,
  kind: true,
  task: true,
});
export type AlertExportQuery = z.input<typeof AlertExportQuerySchema>;

const alertShape: ExportShape<DivergenceAlert> = {
  columns: [
    "id",
    "kind",
    "severity",
    "status",
    "task_id",
    "execution_id",
    "occurrences",
    "message",
    "created_at",
    "last_seen_at",
    "updated_at",
  ],
  record: (a) => ({
    id: a.id,
    kind: a.kind,
    severity: a.severity,
    status: a.status,
    task_id: a.taskId,
    execution_id: a.executionId,
    occurrences: a.occurrences,
    message: a.message,
    created_at: a.createdAt.toISOString(),
    last_seen_at: a.lastSeenAt.toISOString(),
    updated_at: a.updatedAt.toISOString(),
  }),
};

/** Every alert the alerts page's filters select, newest first. The evidence (the provider's records) is not exported: open the alert. */
export function exportAlertList(
  db: Db,
  principal: Principal,
  query: AlertExportQuery,
  format: ListExportFormat,
): ReadableStream<Uint8Array> {
  allowed(principal, "alerts:read");
  const filters = AlertExportQuerySchema.parse(query);
  return streamPages(
    (cursor) => listAlerts(db, { ...filters, cursor: cursor ?? undefined, limit: pageSize }),
    alertShape,
    format,
  );
}
