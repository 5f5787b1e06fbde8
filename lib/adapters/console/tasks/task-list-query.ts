import { z } from "zod";
import type { WorkflowDefinitionData } from "@/lib/model/workflows/workflow-definition";

/**
 * The task list's URL is its state: filters, search and cursor live in the
 * query string, so a filtered page can be bookmarked, shared and reloaded.
 */
export const taskListPageSize = 25;

const optionalText = (max: number) =>
  z
    .string()
    .trim()
    .max(max)
    .optional()
    .transform((v) => (v ? v : undefined));

const first = (v: unknown) => (Array.isArray(v) ? v[0] : v);

const TaskListParamsSchema = z.object({
  status: z.preprocess(first, optionalText(64)),
  workflow: z.preprocess(first, optionalText(64)),
  q: z.preprocess(first, optionalText(128)),
  actor: z.preprocess(first, optionalText(256)),
  sort: z.preprocess(first, z.enum(["updated", "created"]).optional().catch(undefined)),
  order: z.preprocess(first, z.enum(["asc", "desc"]).optional().catch(undefined)),
  cursor: z.preprocess(first, optionalText(512)),
});

export type TaskListParams = z.infer<typeof TaskListParamsSchema>;

/** Unknown or malformed values are dropped rather than failing the page; a bad cursor is reported by listTasks. */
export function parseTaskListParams(
  searchParams: Record<string, string | string[] | undefined>,
  /** The registry's names (lib/stores/workflow-registry.ts listWorkflowNames). */
  workflowNames: readonly string[],
): TaskListParams {
  const parsed = TaskListParamsSchema.safeParse(searchParams);
  const params = parsed.success
    ? parsed.data
    : {
        status: undefined,
        workflow: undefined,
        q: undefined,
        actor: undefined,
        sort: undefined,
        order: undefined,
        cursor: undefined,
      };
  return {
    ...params,
    workflow: params.workflow && workflowNames.includes(params.workflow) ? params.workflow : undefined,
  };
}

export { taskListHref } from "@/lib/adapters/console/tasks/task-list-href";

export function hasFilters(params: TaskListParams): boolean {
  return Boolean(params.status || params.workflow || params.q || params.actor);
}

/** Status options for the filter, grouped by workflow, each in its definitions' order, every version's states. */
export function statusOptionsByWorkflow(
  definitions: ReadonlyArray<Pick<WorkflowDefinitionData, "name" | "states">>,
): Array<{ workflow: string; statuses: string[] }> {
  const byName = new Map<string, Set<string>>();
  for (const def of definitions) {
    const statuses = byName.get(def.name) ?? new Set<string>();
    for (const s of Object.keys(def.states)) statuses.add(s);
    byName.set(def.name, statuses);
  }
  return [...byName].map(([workflow, statuses]) => ({ workflow, statuses: [...statuses] }));
}
