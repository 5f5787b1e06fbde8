import { randomUUID } from "node:crypto";
import { describe, inject } from "vitest";
import {
  deltaChannelHistoryTests,
  specTest,
  type CheckpointSaverTestInitializer,
} from "@langchain/langgraph-checkpoint-validation";
import { VeritySaver } from "@/sdk/langgraph/verity-saver";

/**
 * LangGraph's official checkpointer conformance suite
 * (@langchain/langgraph-checkpoint-validation: put, putWrites, getTuple,
 * list, deleteThread, and the opt-in getDeltaChannelHistory clauses) run
 * against VeritySaver talking HTTP to a live Verity. Each checkpointer the
 * suite creates gets a namespace of its own: the suite reuses thread ids
 * ("1", "thread-1"). One file per database, so the two run side by side.
 */
export function runOfficialSuiteOn(database: "embedded" | "postgres"): void {
  const server = inject("liveServers").find((s) => s.name === database)!;
  const initializer: CheckpointSaverTestInitializer<VeritySaver> = {
    checkpointerName: `VeritySaver on ${database === "embedded" ? "the embedded database" : "PostgreSQL"}`,
    createCheckpointer: () =>
      new VeritySaver({ baseUrl: server.baseUrl, token: server.token, namespace: `suite-${randomUUID()}` }),
    destroyCheckpointer: (saver) => saver.close(),
  };
  specTest(initializer);
  describe(`${initializer.checkpointerName} (opt-in clauses)`, () => deltaChannelHistoryTests(initializer));
}
