/**
 * One refund agent run in its own process, for the crash cases of
 * tests/frameworks: `node --import tsx tests/frameworks/agent-worker.ts`
 * with FRAMEWORK, VERITY_URL (tests/helpers/engine-api-server.ts), TASK_ID,
 * CALL_ID, SANDBOX_URL and, to die like a crashed worker,
 * VERITY_FAULT_KILL_AT=after_call (the process SIGKILLs itself right after
 * the provider answered, before the outcome is recorded). A run that ends
 * prints one JSON line: the AgentRun and how many calls reached the provider.
 */
import { killAtFaultPoints, parseFaultPoints, VerityClient } from "@/sdk";
import { sandboxRefundTool } from "./refund-tool";
import { frameworks, runRefundAgent, type Framework } from "./run-agent";

const env = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`agent-worker needs ${name}`);
  return value;
};

const framework = env("FRAMEWORK") as Framework;
if (!frameworks.includes(framework)) throw new Error(`unknown FRAMEWORK ${framework}`);
let calls = 0;
const run = await runRefundAgent(
  framework,
  {
    verity: new VerityClient({ baseUrl: env("VERITY_URL"), token: "engine-api-server-ignores-it" }),
    taskId: env("TASK_ID"),
    faultPoint: killAtFaultPoints(parseFaultPoints(process.env.VERITY_FAULT_KILL_AT)),
  },
  sandboxRefundTool(env("SANDBOX_URL"), { onCall: () => void calls++ }),
  env("CALL_ID"),
);
process.stdout.write(`${JSON.stringify({ ...run, calls })}\n`);
