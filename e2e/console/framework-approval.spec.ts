import { randomUUID } from "node:crypto";
import { expect, test } from "@playwright/test";
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { Command, END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { VerityClient } from "@verity/sdk";
import { VeritySaver, verityToolNode } from "@verity/sdk/langgraph";
import type { VerityApprovalInterrupt } from "@/sdk/frameworks/langgraph";
import { demoAgent } from "@/lib/config/demo-accounts";
import { sandboxRefundTool, type RefundTool } from "@/examples/shared/refund-agent";
import { refundResultOf, scriptedChatModel } from "@/examples/shared/scripted-chat-model";
import { refundsOfTask, useProvider } from "../api/provider";
import { createRunningTask } from "../pages/agent-seed";
import { signIn } from "../pages/login-page";
import { ReviewDetailPage } from "../pages/reviews-page";
import { axeViolations } from "../pages/axe";

/**
 * A framework's own approval, decided by a person in Verity's console: a
 * LangGraph agent (its thread kept by VeritySaver) asks for a refund that
 * needs approval; the graph pauses with interrupt() while the call waits in
 * the review queue; an operator approves it in the browser with a reason;
 * the graph is resumed and finishes with one refund, the one Verity sent.
 */
test.setTimeout(180_000);

test("an operator's approval in the review queue resumes a paused LangGraph run; the refund is made once", async ({
  page,
  request,
  baseURL,
}) => {
  const provider = await useProvider();
  const task = await createRunningTask(request);
  const orderId = randomUUID().slice(0, 8);
  const refund: RefundTool = {
    ...sandboxRefundTool(provider.url),
    approval: () => "a refund of a disputed order: a person confirms it first",
  };
  const run = { verity: new VerityClient({ baseUrl: baseURL!, token: demoAgent.token }), taskId: task.id };
  const saver = new VeritySaver({ baseUrl: baseURL!, token: demoAgent.token, namespace: `approval-${orderId}` });
  const model = scriptedChatModel(orderId);
  const graph = new StateGraph(MessagesAnnotation)
    .addNode("agent", async (state) => ({ messages: [await model.invoke(state.messages)] }))
    .addNode("tools", verityToolNode(run, [refund], { interruptForApproval: true }))
    .addEdge(START, "agent")
    .addConditionalEdges("agent", (state) => {
      const last = state.messages.at(-1);
      return last && AIMessage.isInstance(last) && last.tool_calls?.length ? "tools" : END;
    })
    .addEdge("tools", "agent")
    .compile({ checkpointer: saver });
  const config = { configurable: { thread_id: `order-${orderId}` } };
  try {
    await graph.invoke({ messages: [new HumanMessage(`Order ${orderId} arrived broken: refund it.`)] }, config);
    const waiting = (await graph.getState(config)).tasks
      .flatMap((t) => t.interrupts)
      .map((i) => i.value as VerityApprovalInterrupt);
    expect(waiting).toHaveLength(1);
    expect(await refundsOfTask(provider.url, task.id)).toHaveLength(0);

    await signIn(page, "operator", `/reviews/${encodeURIComponent(waiting[0]!.reviewId)}`);
    const review = new ReviewDetailPage(page);
    await expect(page.getByRole("heading", { name: "The agent asked for a person's approval" })).toBeVisible();
    await expect(page.getByText("a refund of a disputed order: a person confirms it first").first()).toBeVisible();
    expect(await axeViolations(page)).toEqual([]);
    await review.decide("Approve & execute", "order checked against the courier's damage report");
    // Approving sends the refund from the server: a provider round trip, slow on a loaded machine.
    await expect(review.done).toBeVisible({ timeout: 45_000 });

    // The graph, resumed from its thread in Verity, runs the same call: the receipt of what Verity sent.
    const { messages } = await graph.invoke(new Command({ resume: "decided" }), config);
    expect(refundResultOf(messages)).toMatchObject({ status: "succeeded", replayed: true });
    expect((await graph.getState(config)).tasks.flatMap((t) => t.interrupts)).toEqual([]);
    expect(await refundsOfTask(provider.url, task.id)).toHaveLength(1);
  } finally {
    await saver.close();
    await provider.close();
  }
});
