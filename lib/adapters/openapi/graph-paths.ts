/** LangGraph threads kept by Verity (VeritySaver's wire format): threads, checkpoints, pending writes. */
import {
  jsonContent,
  type JsonSchema,
  problems,
  ref,
  type SchemaEntries,
} from "@/lib/adapters/openapi/shared-components";
import {
  EnsureGraphThreadInputSchema,
  PutGraphCheckpointInputSchema,
  PutGraphWritesInputSchema,
} from "@/lib/model/graph/graph-checkpoint";
import {
  GraphCheckpointPageSchema,
  GraphPutResultSchema,
  GraphThreadResourceSchema,
} from "@/lib/adapters/api/graph-resources";

export const graphRequestSchemas: SchemaEntries = [
  ["GraphThreadRequest", EnsureGraphThreadInputSchema],
  ["GraphCheckpointPut", PutGraphCheckpointInputSchema],
  ["GraphWritesPut", PutGraphWritesInputSchema],
];

export const graphResponseSchemas: SchemaEntries = [
  ["GraphThread", GraphThreadResourceSchema],
  ["GraphPutResult", GraphPutResultSchema],
  ["GraphCheckpointPage", GraphCheckpointPageSchema],
];

const query = (name: string, description: string, required = false) => ({
  name,
  in: "query",
  required,
  description,
  schema: { type: "string" },
});
const fencingTokenHeader = {
  name: "Fencing-Token",
  in: "header",
  required: false,
  description: "Your lease on the thread's task: a write without the live lease's token is refused (409).",
  schema: { type: "string", example: "17" },
};
const writers =
  "Needs tasks:transition and the thread's workflow in the token's scopes; an agent reaches only its own threads.";

export function graphPaths(): Record<string, JsonSchema> {
  return {
    "/api/v1/graph/threads": {
      post: {
        tags: ["graph"],
        operationId: "ensureGraphThread",
        summary: "Open a LangGraph thread: its Verity task, created on first use",
        description:
          "Needs tasks:create. The task id is derived from (namespace, thread_id), so two workers opening one new thread get one task. Lease it (POST /api/v1/tasks/{id}/lease) before writing.",
        requestBody: { required: true, content: jsonContent(ref("GraphThreadRequest")) },
        responses: {
          200: { description: "The thread existed.", content: jsonContent(ref("GraphThread")) },
          201: { description: "The thread's task was created.", content: jsonContent(ref("GraphThread")) },
          ...problems(400, 401, 403, 409, 413, 415),
        },
      },
      delete: {
        tags: ["graph"],
        operationId: "deleteGraphThread",
        summary: "LangGraph's deleteThread: remove a thread's checkpoints and writes",
        description: `${writers} The task, its transitions and audit entries stay, with a graph.thread_deleted entry.`,
        parameters: [
          query("namespace", "The saver's namespace."),
          query("thread_id", "The thread.", true),
          fencingTokenHeader,
        ],
        responses: {
          200: { description: "Deleted." },
          ...problems(400, 401, 403, 404, 409, 422),
        },
      },
    },
    "/api/v1/graph/checkpoints": {
      get: {
        tags: ["graph"],
        operationId: "listGraphCheckpoints",
        summary: "LangGraph's list and getTuple: checkpoints newest first, with channel values and pending writes",
        description:
          "Needs tasks:read. Without thread_id, every thread of the namespace the caller may reach. A thread that does not exist has no checkpoints.",
        parameters: [
          query("namespace", "The saver's namespace."),
          query("thread_id", "One thread."),
          query("checkpoint_ns", "One checkpoint namespace (subgraph)."),
          query("checkpoint_id", "One checkpoint."),
          query("before", "Only checkpoints whose id sorts before this one."),
          query("filter", 'Metadata members that must match, as a JSON object, e.g. {"source":"loop"}.'),
          query("limit", "Page size, 1-500 (default 100)."),
          query("cursor", "next_cursor of the previous page."),
        ],
        responses: {
          200: { description: "A page.", content: jsonContent(ref("GraphCheckpointPage")) },
          ...problems(400, 401, 403),
        },
      },
      post: {
        tags: ["graph"],
        operationId: "putGraphCheckpoint",
        summary: "LangGraph's put: a checkpoint, as a compare-and-swap of the thread's task",
        description: `${writers} A put from a checkpoint that is no longer the head is refused (422 graph_history_linear) unless fork=true (a replay the caller chose, recorded in forked_from). The same checkpoint again is answered as a replay.`,
        parameters: [fencingTokenHeader],
        requestBody: { required: true, content: jsonContent(ref("GraphCheckpointPut")) },
        responses: {
          200: { description: "Already stored with the same content.", content: jsonContent(ref("GraphPutResult")) },
          201: { description: "Stored.", content: jsonContent(ref("GraphPutResult")) },
          ...problems(400, 401, 403, 404, 409, 413, 415, 422),
        },
      },
    },
    "/api/v1/graph/writes": {
      post: {
        tags: ["graph"],
        operationId: "putGraphWrites",
        summary: "LangGraph's putWrites: a graph task's pending writes against a stored checkpoint",
        description: `${writers} A regular write (idx >= 0) is kept as first written; a special one (idx < 0) is replaced.`,
        parameters: [fencingTokenHeader],
        requestBody: { required: true, content: jsonContent(ref("GraphWritesPut")) },
        responses: {
          201: { description: "Stored." },
          ...problems(400, 401, 403, 404, 409, 413, 415, 422),
        },
      },
    },
  };
}
