import type { z } from "zod";
import type {
  GraphCheckpointPageSchema,
  GraphPutResultSchema,
  GraphThreadResourceSchema,
} from "@/lib/adapters/api/graph-resources";
import type {
  ListGraphCheckpointsQuerySchema,
  PutGraphCheckpointInputSchema,
  PutGraphWritesInputSchema,
} from "@/lib/model/graph/graph-checkpoint";

/** The wire types of /api/v1/graph, from the server's own schemas (type-only: no server code at run time). */
export type GraphThread = z.infer<typeof GraphThreadResourceSchema>;
export type GraphPutResult = z.infer<typeof GraphPutResultSchema>;
export type GraphCheckpointPage = z.infer<typeof GraphCheckpointPageSchema>;
export type GraphCheckpointTuple = GraphCheckpointPage["items"][number];
export type GraphPutBody = Omit<z.input<typeof PutGraphCheckpointInputSchema>, "fencing_token">;
export type GraphWritesBody = Omit<z.input<typeof PutGraphWritesInputSchema>, "fencing_token">;
export type GraphListQuery = Omit<z.input<typeof ListGraphCheckpointsQuerySchema>, "filter"> & {
  filter?: Record<string, unknown>;
};
