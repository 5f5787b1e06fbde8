/** The invariant monitor's part of the OpenAPI document, under the alerts tag and the alerts permissions: it is what raises them. */
import {
  jsonContent,
  type JsonSchema,
  problems,
  ref,
  type SchemaEntries,
} from "@/lib/adapters/openapi/shared-components";
import { MonitorRunInputSchema } from "@/lib/use-cases/monitor/monitor-runs";
import { MonitorPassResultSchema, MonitorRunListSchema } from "@/lib/adapters/api/alert-resources";
import { alertActors, alertReaders } from "@/lib/adapters/openapi/alert-paths";

export const monitorRequestSchemas: SchemaEntries = [["MonitorRunRequest", MonitorRunInputSchema]];

export const monitorResponseSchemas: SchemaEntries = [
  ["MonitorRunList", MonitorRunListSchema],
  ["MonitorPassResult", MonitorPassResultSchema],
];

export function monitorPaths(): Record<string, JsonSchema> {
  return {
    "/api/v1/monitor/runs": {
      get: {
        tags: ["alerts"],
        operationId: "listMonitorRuns",
        summary: "The invariant monitor's last passes",
        description: alertReaders,
        responses: {
          200: { description: "Newest first.", content: jsonContent(ref("MonitorRunList")) },
          ...problems(401, 403),
        },
      },
      post: {
        tags: ["alerts"],
        operationId: "runMonitorPass",
        summary: "Run one invariant-monitor pass now",
        description: `${alertActors} 201 with the run; 200 with skipped=true when another pass is in progress.`,
        requestBody: { required: false, content: jsonContent(ref("MonitorRunRequest")) },
        responses: {
          200: { description: "Skipped: another pass is running.", content: jsonContent(ref("MonitorPassResult")) },
          201: { description: "The pass.", content: jsonContent(ref("MonitorPassResult")) },
          ...problems(400, 401, 403, 413, 415),
        },
      },
    },
  };
}
