import { generateText, isStepCount, type ModelMessage } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { describe, expect, it } from "vitest";
import { decideReview } from "@/lib/use-cases/reviews/decide-review";
import { getReviewOrThrow } from "@/lib/use-cases/reviews/get-review";
import type { ToolCallContext } from "@/sdk";
import { verityApprovalResponses, verityTool, verityToolApproval } from "@/sdk/frameworks/ai-sdk";
import { alice, connectorsFor, runningTask } from "@/tests/helpers/effects";
import { describeDurableRefunds, useFrameworkEnvironment } from "./durable-refund-cases";
import { prompt, refundArgs, sandboxRefundTool } from "./refund-tool";

const env = useFrameworkEnvironment();
describeDurableRefunds("ai-sdk", env);

/** A scripted model that answers from the conversation: a refund call until a tool result is in it, then words. */
function scriptedModel(callId: string) {
  const usage = {
    inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
    outputTokens: { total: 1, text: 1, reasoning: undefined },
  };
  return new MockLanguageModelV4({
    doGenerate: async ({ prompt: messages }) => {
      const answered = messages.some((m) => m.role === "tool" && m.content.some((p) => p.type === "tool-result"));
      return answered
        ? {
            content: [{ type: "text", text: "Refund done." }],
            finishReason: { unified: "stop", raw: undefined },
            usage,
            warnings: [],
          }
        : {
            content: [{ type: "tool-call", toolCallId: callId, toolName: "refund", input: JSON.stringify(refundArgs) }],
            finishReason: { unified: "tool-calls", raw: undefined },
            usage,
            warnings: [],
          };
    },
  });
}

describe("ai-sdk: toolApproval decided in Verity's review queue", () => {
  it("the generation ends with an approval request; once the operator approves in Verity, the next generation gets the refund's receipt", async () => {
    const task = await runningTask(env.db);
    const run = env.runOf(task.id);
    const calls: ToolCallContext[] = [];
    const refund = sandboxRefundTool(env.sandboxUrl, {
      approval: "refund of a disputed order",
      onCall: (c) => calls.push(c),
    });
    const settings = {
      model: scriptedModel("call_refund_t"),
      tools: { refund: verityTool(run, refund) },
      toolApproval: { refund: verityToolApproval(run, refund) },
      stopWhen: isStepCount(3),
    };
    const messages: ModelMessage[] = [{ role: "user", content: prompt }];

    const first = await generateText({ ...settings, messages });
    messages.push(...first.responseMessages);
    const asked = await verityApprovalResponses(run, [refund], first.content);
    expect(asked.responses).toEqual([]);
    expect(asked.pending).toMatchObject([{ status: "awaiting_approval", toolCallId: "refund:call_refund_t" }]);
    expect(await env.refundsAtProvider(task.id)).toBe(0);

    const waiting = asked.pending[0];
    const reviewId = waiting?.status === "awaiting_approval" ? waiting.reviewId : "";
    const review = await getReviewOrThrow(env.db, reviewId);
    await decideReview(
      env.db,
      reviewId,
      { expected_version: review.version, decision: "approve_execute", reason: "the order was checked" },
      alice,
      connectorsFor(env.sandboxUrl),
    );

    const decided = await verityApprovalResponses(run, [refund], first.content);
    expect(decided).toMatchObject({ pending: [], responses: [{ type: "tool-approval-response", approved: true }] });
    messages.push({ role: "tool", content: decided.responses });
    const second = await generateText({ ...settings, messages });
    // The approved call runs before the model is asked again: its result is in the response messages.
    const outputs = second.responseMessages.flatMap((m) =>
      m.role === "tool"
        ? m.content.flatMap((p) => (p.type === "tool-result" && p.output.type === "json" ? [p.output.value] : []))
        : [],
    );
    expect(outputs).toMatchObject([{ status: "succeeded", replayed: true }]);
    expect(second.text).toBe("Refund done.");
    expect(calls).toEqual([]);
    expect(await env.refundsAtProvider(task.id)).toBe(1);
  });
});
