import type { Db } from "@/lib/db/client";
import { AppError } from "@/lib/core/errors";
import { keysetCursor, keysetParts } from "@/lib/core/keyset-cursor";
import type { Prisma } from "@/lib/generated/prisma/client";
import type { ExecutionStatus } from "@/lib/generated/prisma/enums";
import { executionListPageSize, type ExecutionListParams } from "@/lib/adapters/console/executions/executions-query";

export interface ExecutionListItem {
  id: string;
  taskId: string;
  toolCallId: string;
  tool: string;
  status: ExecutionStatus;
  attempt: number;
  idempotencyKey: string;
  createdAt: Date;
  /** When it entered its current status. */
  updatedAt: Date;
}

export interface ExecutionPage {
  items: ExecutionListItem[];
  nextCursor: string | null;
}

/**
 * Executions across tasks, most recently changed first, keyset-paged on
 * (updated_at, id): with a status filter each page is a range of the
 * executions (status, updated_at) index, so page 100 costs what page 1 does.
 */
export async function listExecutionsAcrossTasks(
  db: Db,
  params: ExecutionListParams,
  limit = executionListPageSize,
): Promise<ExecutionPage> {
  const after = params.cursor ? decodeCursor(params.cursor) : undefined;
  const where: Prisma.ExecutionWhereInput = {
    ...(params.status ? { status: params.status } : {}),
    ...(params.tool ? { tool: params.tool } : {}),
    ...(after
      ? { updatedAt: { lte: after.updatedAt }, OR: [{ updatedAt: { lt: after.updatedAt } }, { id: { lt: after.id } }] }
      : {}),
  };
  const rows = await db.execution.findMany({
    where,
    orderBy: [{ updatedAt: "desc" }, { id: "desc" }],
    take: limit + 1,
    select: {
      id: true,
      taskId: true,
      toolCallId: true,
      tool: true,
      status: true,
      attempt: true,
      idempotencyKey: true,
      createdAt: true,
      updatedAt: true,
    },
  });
  const items = rows.slice(0, limit);
  const last = items[items.length - 1];
  return { items, nextCursor: rows.length > limit && last ? encodeCursor(last) : null };
}

export type ExecutionListData =
  | { ok: true; page: ExecutionPage; /** How many calls the filters select, over every page. */ total: number }
  | { ok: false; message: string };

/** The page's data: a bad cursor becomes a message, anything else is a real failure. */
export async function loadExecutionList(db: Db, params: ExecutionListParams): Promise<ExecutionListData> {
  try {
    const [page, total] = await Promise.all([
      listExecutionsAcrossTasks(db, params),
      // The (status, updated_at) index answers a status filter's count; the list's total over every page.
      db.execution.count({
        where: { ...(params.status ? { status: params.status } : {}), ...(params.tool ? { tool: params.tool } : {}) },
      }),
    ]);
    return { ok: true, page, total };
  } catch (error) {
    if (error instanceof AppError && error.code === "validation_failed") return { ok: false, message: error.message };
    throw error;
  }
}

/** (updated_at, id) of the page's last row. */
const pageCursor = keysetCursor([keysetParts.instant, keysetParts.text], {
  notOurs: "not a cursor of this list",
  advice: "start again from the first page",
});

function encodeCursor(e: { updatedAt: Date; id: string }): string {
  return pageCursor.encode([e.updatedAt, e.id]);
}

function decodeCursor(cursor: string): { updatedAt: Date; id: string } {
  const [updatedAt, id] = pageCursor.decode(cursor);
  return { updatedAt, id };
}
