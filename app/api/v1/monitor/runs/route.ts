import { parseInput, readOptionalApiJson } from "@/lib/adapters/api/context";
import { monitorRunResource } from "@/lib/adapters/api/alert-resources";
import { requireApiOrSessionPrincipal } from "@/lib/adapters/api/session-or-bearer";
import { dbFor } from "@/lib/db/client";
import { MonitorRunInputSchema } from "@/lib/use-cases/monitor/monitor-runs";
import { runMonitorPass } from "@/lib/use-cases/monitor/run-monitor-pass";
import { json, otherMethods, withProblems } from "@/lib/adapters/http/respond";

export const dynamic = "force-dynamic";

/** The monitor's last passes, newest first. */
export const GET = withProblems(async (request) => {
  const principal = await requireApiOrSessionPrincipal(request, "alerts:read");
  const runs = await dbFor(principal).invariantMonitorRun.findMany({
    orderBy: [{ startedAt: "desc" }, { id: "desc" }],
    take: 20,
  });
  return json({ items: runs.map(monitorRunResource) });
});

/**
 * A monitor pass now (alerts:act: operators, engineers, admins), the same
 * pass the server's loop makes; `skipped` when another pass is in progress.
 */
export const POST = withProblems(async (request) => {
  const principal = await requireApiOrSessionPrincipal(request, "alerts:act");
  const input = parseInput(MonitorRunInputSchema, (await readOptionalApiJson(request)) ?? {});
  const result = await runMonitorPass(dbFor(principal), {}, { only: input.only });
  return json(
    {
      run: result.run ? monitorRunResource(result.run) : null,
      skipped: result.run === null,
      violations: result.violations,
      alerts: result.alerts.map((a) => ({ id: a.id, kind: a.kind, task_id: a.taskId, created: a.created })),
    },
    { status: result.run ? 201 : 200 },
  );
});

export const { PUT, PATCH, DELETE } = otherMethods(["GET", "POST"]);
