import { createMiddleware, tool, ToolMessage } from "langchain";
import type { DurableToolSpec, VerityRun } from "./durable-tool";
import { runDurableToolInGraph, type VerityNodeOptions } from "./langgraph";

/**
 * A LangChain v1 agent middleware (`createAgent({ middleware: [...] })`)
 * that brings the durable tools to the agent and runs each of their calls
 * through Verity's execution ledger in `wrapToolCall`, keyed by the task
 * and the tool call's id. Calls of other tools pass through untouched.
 *
 * The tool message's content is the DurableToolResult as JSON; its status
 * is "error" for anything but a success, so the model sees at once that the
 * effect did not (or not yet) happen.
 *
 * With `interruptForApproval` (and a checkpointer on the agent), a call
 * waiting for a person's approval in Verity's review queue pauses the agent
 * with LangGraph's interrupt(), as LangChain's own human-in-the-loop
 * middleware does; resume it (`new Command({ resume: … })`) once the review
 * is decided, and the same call goes as the review says.
 */
export function verityMiddleware(run: VerityRun, specs: readonly DurableToolSpec[], options: VerityNodeOptions = {}) {
  const byName = new Map(specs.map((spec) => [spec.name, spec]));
  return createMiddleware({
    name: "VerityDurableTools",
    tools: specs.map((spec) =>
      tool(
        () => {
          // The middleware answers every call of this tool; reaching here means it was left out of the agent.
          throw new Error(`${spec.name} runs only through Verity's middleware`);
        },
        { name: spec.name, description: spec.description, schema: spec.inputSchema },
      ),
    ),
    wrapToolCall: async (request, handler) => {
      const spec = byName.get(request.toolCall.name);
      if (!spec) return handler(request);
      const callId = request.toolCall.id;
      const parsed = spec.inputSchema.safeParse(request.toolCall.args);
      if (!callId || !parsed.success) {
        return new ToolMessage({
          content: callId
            ? `Invalid arguments for ${spec.name}: ${parsed.error?.message ?? "unreadable"}`
            : `${spec.name}: the tool call has no id, so Verity cannot key it; nothing was sent.`,
          tool_call_id: callId ?? "",
          name: spec.name,
          status: "error",
        });
      }
      const result = await runDurableToolInGraph(run, spec, parsed.data, callId, options);
      return new ToolMessage({
        content: JSON.stringify(result),
        tool_call_id: callId,
        name: spec.name,
        status: result.status === "succeeded" ? "success" : "error",
      });
    },
  });
}
