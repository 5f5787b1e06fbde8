import { dbFor } from "@/lib/db/client";
import { checkpointsToken } from "@/lib/adapters/console/checkpoints/checkpoints";
import { notFound, requireConsoleSession } from "@/lib/adapters/console/shared/json-route";
import { json, otherMethods, withProblems } from "@/lib/adapters/http/respond";

/** The change token of a task's checkpoint pages: moves with the task's version, new checkpoints and restore attempts. */
export const GET = withProblems(async (_request, { params }: { params: Promise<{ id: string }> }) => {
  const principal = await requireConsoleSession("checkpoints:read");
  const { id } = await params;
  const token = await checkpointsToken(dbFor(principal), id);
  if (token === null) throw notFound("Task", id);
  return json({ token });
});

export const { POST, PUT, PATCH, DELETE } = otherMethods(["GET"]);
