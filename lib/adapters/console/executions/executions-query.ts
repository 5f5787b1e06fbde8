import { z } from "zod";
import { ToolNameSchema } from "@/lib/model/tools/tool-name";
import { ExecutionStatus } from "@/lib/generated/prisma/enums";

/**
 * The executions list's URL is its state (`?status=OUTCOME_UNKNOWN&tool=…`),
 * so the dashboard can link to a filtered list and an operator can share it.
 */
export const executionListPageSize = 25;

export const executionStatuses = Object.values(ExecutionStatus) as [ExecutionStatus, ...ExecutionStatus[]];

const first = (v: unknown) => (Array.isArray(v) ? v[0] : v);
const optionalText = (max: number) =>
  z
    .string()
    .trim()
    .max(max)
    .optional()
    .transform((v) => (v ? v : undefined));

const ExecutionListParamsSchema = z.object({
  status: z.preprocess(first, optionalText(64)),
  tool: z.preprocess(first, optionalText(64)),
  cursor: z.preprocess(first, optionalText(512)),
});

export interface ExecutionListParams {
  status?: ExecutionStatus;
  tool?: string;
  cursor?: string;
}

/** Unknown values are dropped (the unfiltered list) rather than failing the page; a bad cursor is reported by the list. */
export function parseExecutionListParams(
  searchParams: Record<string, string | string[] | undefined>,
): ExecutionListParams {
  const parsed = ExecutionListParamsSchema.safeParse(searchParams);
  if (!parsed.success) return {};
  const status = parsed.data.status?.toUpperCase();
  return {
    status: executionStatuses.find((s) => s === status),
    tool:
      // Any well-formed name: a registered tool's calls are filtered like a built-in's.
      parsed.data.tool && ToolNameSchema.safeParse(parsed.data.tool).success ? parsed.data.tool : undefined,
    cursor: parsed.data.cursor,
  };
}

export function executionListHref(params: ExecutionListParams): string {
  const search = new URLSearchParams();
  if (params.status) search.set("status", params.status);
  if (params.tool) search.set("tool", params.tool);
  if (params.cursor) search.set("cursor", params.cursor);
  const query = search.toString();
  return query ? `/executions?${query}` : "/executions";
}
