import { randomUUID } from "node:crypto";
import { describe, expect, inject, it } from "vitest";
import { Annotation, END, START, StateGraph } from "@langchain/langgraph";
import { VerityClient, isVerityApiError } from "@/sdk";
import { VeritySaver } from "@/sdk/langgraph/verity-saver";

/**
 * langgraph#8796: the conformance suite has no clause for two writers on
 * one thread, and two workers that both resume a thread fork its history
 * silently. With VeritySaver the second worker is refused (the thread's
 * lease), a put from a stale read is refused (its parent is not the head),
 * and a replay the user asks for is kept as a recorded fork.
 */
const Steps = Annotation.Root({
  steps: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }),
});

function graphOf(saver: VeritySaver, worker: string) {
  return new StateGraph(Steps)
    .addNode("work", () => ({ steps: [worker] }))
    .addEdge(START, "work")
    .addEdge("work", END)
    .compile({ checkpointer: saver });
}

for (const server of inject("liveServers")) {
  describe(`two writers on one LangGraph thread (${server.name})`, () => {
    const client = new VerityClient({ baseUrl: server.baseUrl, token: server.token });
    const saverFor = (namespace: string) =>
      new VeritySaver({ baseUrl: server.baseUrl, token: server.token, namespace });

    it("refuses the second worker while the first holds the thread, and the history stays one line", async () => {
      const namespace = `fork-${randomUUID()}`;
      const threadId = "order-1001";
      const config = { configurable: { thread_id: threadId } };
      const workerA = saverFor(namespace);
      const workerB = saverFor(namespace);
      try {
        await graphOf(workerA, "A").invoke({ steps: ["start"] }, config);
        // B resumes the same thread, as a second replica would after a redelivered message.
        const refused = await graphOf(workerB, "B")
          .invoke({ steps: ["again"] }, config)
          .then(
            () => null,
            (error: unknown) => error,
          );
        expect(isVerityApiError(refused) && refused.status).toBe(409);
        expect(isVerityApiError(refused) && refused.code).toBe("lease_conflict");
        // B may read what A wrote; A goes on.
        expect((await graphOf(workerB, "B").getState(config)).values.steps).toEqual(["start", "A"]);
        await graphOf(workerA, "A").invoke({ steps: ["more"] }, config);

        const page = await client.listGraphCheckpoints({
          namespace,
          thread_id: threadId,
          checkpoint_ns: "",
          limit: 100,
        });
        const chain = page.items;
        expect(chain.length).toBeGreaterThanOrEqual(4);
        // Newest first: each checkpoint's parent is the next older one, the oldest has none.
        chain.forEach((c, i) => expect(c.parent_checkpoint_id).toBe(chain[i + 1]?.checkpoint_id ?? null));
        expect(chain.every((c) => c.created_by === chain[0]!.created_by && c.forked_from === null)).toBe(true);
        expect((await graphOf(workerA, "A").getState(config)).values.steps).toEqual(["start", "A", "more", "A"]);
      } finally {
        await workerA.close();
        await workerB.close();
      }
    });

    it("refuses a put from a stale read (its parent is no longer the head) and records a chosen replay as a fork", async () => {
      const namespace = `fork-${randomUUID()}`;
      const config = { configurable: { thread_id: "t" } };
      const saver = saverFor(namespace);
      try {
        const graph = graphOf(saver, "A");
        await graph.invoke({ steps: ["one"] }, config);
        const history = [];
        for await (const snapshot of graph.getStateHistory(config)) history.push(snapshot);
        const head = history[0]!;
        const older = history[1]!;

        // A writer that read `older` before the head moved (a stale read) and continues from it.
        const stale = saverFor(namespace);
        const headTuple = await saver.getTuple(config);
        const error = await saver
          .put(
            {
              configurable: {
                thread_id: "t",
                checkpoint_ns: "",
                checkpoint_id: older.config.configurable!.checkpoint_id,
              },
            },
            { ...headTuple!.checkpoint, id: randomUUID() },
            { source: "loop", step: 9, parents: {} },
            {},
          )
          .then(
            () => null,
            (e: unknown) => e,
          );
        await stale.close();
        expect(isVerityApiError(error) && error.status).toBe(422);
        expect(String((error as Error).message)).toContain("another writer moved the thread");

        // The user replays from the older checkpoint on purpose: kept, marked as a fork of it.
        await graph.invoke({ steps: ["replayed"] }, older.config);
        const page = await client.listGraphCheckpoints({ namespace, thread_id: "t", checkpoint_ns: "", limit: 100 });
        const forks = page.items.filter((c) => c.forked_from !== null);
        expect(forks).toHaveLength(1);
        expect(forks[0]!.forked_from).toBe(older.config.configurable!.checkpoint_id);
        expect(forks[0]!.parent_checkpoint_id).toBe(older.config.configurable!.checkpoint_id);
        expect(head.config.configurable!.checkpoint_id).not.toBe(forks[0]!.checkpoint_id);
      } finally {
        await saver.close();
      }
    });
  });
}
