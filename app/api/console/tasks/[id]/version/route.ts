import { dbFor } from "@/lib/db/client";
import { getTaskVersion } from "@/lib/use-cases/tasks/task-queries";
import { notFound, requireConsoleSession } from "@/lib/adapters/console/shared/json-route";
import { json, otherMethods, withProblems } from "@/lib/adapters/http/respond";

/** The current version of one task: the detail page polls it and refreshes when it moves. */
export const GET = withProblems(async (_request, { params }: { params: Promise<{ id: string }> }) => {
  const principal = await requireConsoleSession("tasks:read");
  const { id } = await params;
  const version = await getTaskVersion(dbFor(principal), id);
  if (version === null) throw notFound("Task", id);
  return json({ token: String(version), version });
});

export const { POST, PUT, PATCH, DELETE } = otherMethods(["GET"]);
