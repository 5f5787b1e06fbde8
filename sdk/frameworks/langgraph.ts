import { AIMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { interrupt, type LangGraphRunnableConfig } from "@langchain/langgraph";
import type { z } from "zod";
import { runDurableTool, type DurableToolResult, type DurableToolSpec, type VerityRun } from "./durable-tool";

/**
 * LangGraph.js helpers for nodes that make side effects. A node that crashes
 * is executed again from the last checkpoint (langgraph#8039); through
 * these, its calls are the same Verity calls the second time, so the effect
 * is made once and the re-executed node gets the receipt, or "waiting for
 * reconciliation" while the first attempt's outcome is unknown.
 *
 * With `interruptForApproval`, a call waiting for a person's approval in
 * Verity's review queue (DurableToolSpec.approval) pauses the graph with
 * LangGraph's interrupt(), its value a VerityApprovalInterrupt; resume the
 * thread (`new Command({ resume: … })`) once the review is decided, and the
 * node runs the same call again: the receipt of what Verity sent, or
 * rejected. Resumed while the review is still open, it pauses again. It
 * needs a checkpointer, as every interrupt does.
 */

export interface VerityNodeOptions {
  interruptForApproval?: boolean;
}

/** What the graph's interrupt carries while a call waits for a person. */
export interface VerityApprovalInterrupt {
  kind: "verity_approval";
  reviewId: string;
  tool: string;
  toolCallId: string;
  message: string;
}

/**
 * Runs the call inside a graph node (a LangGraph node, or a LangChain agent's
 * tool call, which runs in one); while it waits for approval and
 * `interruptForApproval` is set, pauses the graph until it is decided.
 */
export async function runDurableToolInGraph<Schema extends z.ZodObject>(
  run: VerityRun,
  spec: DurableToolSpec<Schema>,
  input: z.output<Schema>,
  callId: string,
  options: VerityNodeOptions,
): Promise<DurableToolResult> {
  let result = await runDurableTool(run, spec, input, callId);
  // interrupt() throws to pause the graph; on resume the node runs again and the
  // same interrupt returns instead, so the call is asked once more: decided, or paused again.
  while (options.interruptForApproval && result.status === "awaiting_approval") {
    const waiting: VerityApprovalInterrupt = {
      kind: "verity_approval",
      reviewId: result.reviewId,
      tool: result.tool,
      toolCallId: result.toolCallId,
      message: result.message,
    };
    interrupt(waiting);
    result = await runDurableTool(run, spec, input, callId);
  }
  return result;
}

/**
 * A tools node for a messages graph: runs the durable tools the last AI
 * message asked for, each keyed by its tool call id, and answers one tool
 * message per call (the DurableToolResult as JSON; status "error" unless it
 * succeeded). Calls of tools it does not know get an error message.
 */
export function verityToolNode(run: VerityRun, specs: readonly DurableToolSpec[], options: VerityNodeOptions = {}) {
  const byName = new Map(specs.map((spec) => [spec.name, spec]));
  return async (state: { messages: BaseMessage[] }): Promise<{ messages: ToolMessage[] }> => {
    const last = state.messages.at(-1);
    if (!last || !AIMessage.isInstance(last)) return { messages: [] };
    const messages: ToolMessage[] = [];
    for (const call of last.tool_calls ?? []) {
      const spec = byName.get(call.name);
      const parsed = spec?.inputSchema.safeParse(call.args);
      if (!spec || !call.id || !parsed?.success) {
        messages.push(
          new ToolMessage({
            content: !spec
              ? `No durable tool named ${call.name}.`
              : !call.id
                ? `${call.name}: the tool call has no id, so Verity cannot key it; nothing was sent.`
                : `Invalid arguments for ${call.name}: ${parsed?.error?.message ?? "unreadable"}`,
            tool_call_id: call.id ?? "",
            name: call.name,
            status: "error",
          }),
        );
        continue;
      }
      const result = await runDurableToolInGraph(run, spec, parsed.data, call.id, options);
      messages.push(
        new ToolMessage({
          content: JSON.stringify(result),
          tool_call_id: call.id,
          name: call.name,
          status: result.status === "succeeded" ? "success" : "error",
        }),
      );
    }
    return { messages };
  };
}

/**
 * One durable call from inside any node, keyed by the node and the graph
 * step it runs at (`<node>:step-<step>`, or `options.key` to name it yourself): a node
 * re-executed from the same checkpoint runs at the same step, so it is the
 * same call. Two calls in one node need distinct keys.
 */
export function callVerityToolInNode<Schema extends z.ZodObject>(
  run: VerityRun,
  spec: DurableToolSpec<Schema>,
  input: z.output<Schema>,
  config: LangGraphRunnableConfig,
  options: VerityNodeOptions & { key?: string } = {},
): Promise<DurableToolResult> {
  const key = options.key;
  const node = config.metadata?.langgraph_node;
  const step = config.metadata?.langgraph_step;
  if (key === undefined && (typeof node !== "string" || typeof step !== "number"))
    throw new Error(`${spec.name}: not inside a graph node (no langgraph_node/langgraph_step); pass options.key`);
  return runDurableToolInGraph(run, spec, input, key ?? `${String(node)}:step-${String(step)}`, options);
}
