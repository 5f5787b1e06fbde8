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
 * against VeritySaver talking HTTP to a live Verity, once on the embedded
 * database and once on PostgreSQL. Each checkpointer the suite creates gets
 * a namespace of its own: the suite reuses thread ids ("1", "thread-1").
 */
for (const server of inject("liveServers")) {
  const initializer: CheckpointSaverTestInitializer<VeritySaver> = {
    checkpointerName: `VeritySaver on ${server.name === "embedded" ? "the embedded database" : "PostgreSQL"}`,
    createCheckpointer: () =>
      new VeritySaver({ baseUrl: server.baseUrl, token: server.token, namespace: `suite-${randomUUID()}` }),
    destroyCheckpointer: (saver) => saver.close(),
  };
  specTest(initializer);
  describe(`${initializer.checkpointerName} (opt-in clauses)`, () => deltaChannelHistoryTests(initializer));
}
