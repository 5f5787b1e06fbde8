import { parseArgs } from "node:util";
import { z } from "zod";
import { parseFaultPoints } from "@/sdk/fault-points";
import type { FaultPoint } from "@/sdk/tool-protocol";
import { planFromHeader } from "@/programs/sandbox/faults";
import { faultHeaderOf } from "@/programs/agent/order";

/**
 * The refund agent's settings: its environment (passed in by
 * scripts/agent.ts, as programs/sandbox/config.ts does for the sandbox, since
 * the agent is a client of Verity, not part of the server lib/config/env.ts
 * configures) and its command line.
 */
export const agentEnvSchema = z.object({
  VERITY_URL: z.url().default("http://localhost:3000"),
  VERITY_TOKEN: z.string().min(1).optional(),
  /** The SPIFFE id of VERITY_TOKEN: `--resume` continues the tasks it created. */
  VERITY_AGENT_IDENTITY: z.string().min(1).optional(),
  /** Chaos: SIGKILL this process at these fault points of every tool call (after_intent, after_sent, after_call, after_outcome). */
  VERITY_FAULT_KILL_AT: z.string().optional(),
});

export interface AgentConfig {
  /** refund (agent-task, the default) or delivery (the registered software-delivery workflow). */
  scenario: "refund" | "delivery";
  /** delivery: how long to answer release lookups while a release's outcome is being settled. */
  settleWaitMs: number;
  verityUrl: string;
  token: string;
  identity: string;
  killAt: FaultPoint[];
  tasks: number;
  amountCents: number;
  currency: string;
  faults: string[];
  faultRate: number;
  seed: number;
  resume: boolean;
  callTimeoutMs: number;
  leaseTtlSeconds: number;
  /** How long to wait out a live lease before leaving the task to its holder. */
  leaseWaitMs: number;
  concurrency: number;
  runId: string;
  /** X-Sandbox-Webhook-Url of this run's refunds; unset, the provider's own setting (Verity's webhook endpoint under npm start). */
  webhookUrl?: string;
  /** --run-id as given: with --resume, only that run's tasks are continued. */
  resumeRunId?: string;
  verbose: boolean;
}

export const usage = `Usage: npm run agent -- [options]

Runs the demo refund workflow against Verity (VERITY_URL) and the sandbox
provider (VERITY_SANDBOX_URL): per task, an agent-task with subtasks
lookup-order, issue-refund, notify-customer, driven to COMPLETED under a
lease, every external call through Verity's execution ledger.

Options:
  --scenario NAME        refund (default): the refund workflow above; delivery: the demo
                         coding agent on the registered software-delivery workflow (plan,
                         implement, review, test, release through deploy.release), which
                         stops where a person must approve and continues when run again
  --settle-wait-ms N     delivery: how long to answer the release service's lookups while
                         a release's outcome is settled (default 60000)
  --tasks N              tasks to create and run (default 3)
  --amount-cents N       refund amount per task (default 2500)
  --currency CODE        lower-case ISO 4217 (default usd)
  --faults LIST          sandbox faults to inject per call, comma-separated:
                         drop_response, timeout_after_commit, error_after_commit,
                         error_before_commit, duplicate_webhook, latency=<ms>;
                         a+b is one fault of both (latency=30000+error_before_commit:
                         the provider holds the request 30 s, then declines it)
  --fault-rate P         probability that a call gets one of --faults (default 0.3)
  --seed N               seed of the fault draws (default 42)
  --resume               continue this agent's unfinished tasks instead of creating new ones
                         (only those of --run-id, when given)
  --run-id ID            order id prefix (default: time-based); rerunning an id reuses its tasks
  --concurrency N        tasks in parallel (default 1)
  --call-timeout-ms N    a provider call without an answer by then is UNKNOWN (default 5000)
  --lease-ttl N          lease seconds, renewed in the background (default 30)
  --lease-wait-ms N      how long to wait for a live lease on a task to expire before leaving
                         it to its holder (default 0; with --resume 35000: a crashed worker's
                         lease of the default 30 s frees only when it expires)
  --webhook-url URL      where the provider sends this run's refund events (default: its own
                         setting, Verity's /api/v1/events/sandbox under npm start); an
                         unreachable URL models webhooks that never arrive
  --verbose              one line per tool call too

Environment: VERITY_URL (http://localhost:3000), VERITY_TOKEN (the demo agent's),
VERITY_AGENT_IDENTITY (the demo agent's), VERITY_SANDBOX_URL (http://127.0.0.1:4010),
VERITY_FAULT_KILL_AT=after_call (SIGKILL the process at that fault point).

Exit status: 0 when every task ended as the protocol says (completed, or left
for reconciliation or review); 1 on a protocol error; 2 on bad usage.`;

const positiveInt = (max: number) => z.coerce.number().int().min(1).max(max);

const argsSchema = z.object({
  scenario: z.enum(["refund", "delivery"]).default("refund"),
  "settle-wait-ms": z.coerce.number().int().min(0).max(600_000).default(60_000),
  tasks: positiveInt(10_000).default(3),
  "amount-cents": positiveInt(99_999_999).default(2500),
  currency: z
    .string()
    .regex(/^[a-z]{3}$/, "must be a lower-case ISO 4217 code")
    .default("usd"),
  faults: z
    .string()
    .default("")
    .transform((s, ctx) => {
      const list = s
        .split(",")
        .map((f) => f.trim())
        .filter(Boolean);
      for (const f of list) {
        try {
          if (f.split("+").some((part) => !part.trim())) throw new Error(`"${f}": an empty part in a combined fault`);
          // The sandbox's own rules: known names, at most one outcome per request.
          planFromHeader(faultHeaderOf(f));
        } catch (error) {
          ctx.addIssue({ code: "custom", message: error instanceof Error ? error.message : String(error) });
        }
      }
      return list;
    }),
  "fault-rate": z.coerce.number().min(0).max(1).default(0.3),
  seed: z.coerce.number().int().min(0).max(0xffffffff).default(42),
  resume: z.boolean().default(false),
  "run-id": z
    .string()
    .regex(/^[A-Za-z0-9._-]{1,60}$/, "letters, digits, . _ - (at most 60)")
    .optional(),
  concurrency: positiveInt(32).default(1),
  "call-timeout-ms": positiveInt(600_000).default(5_000),
  "lease-ttl": positiveInt(3600).default(30),
  "lease-wait-ms": z.coerce.number().int().min(0).max(3_600_000).optional(),
  "webhook-url": z.url({ protocol: /^https?$/ }).optional(),
  verbose: z.boolean().default(false),
});

export class UsageError extends Error {
  override name = "UsageError";
}

export function parseAgentConfig(
  argv: string[],
  env: Record<string, string | undefined>,
  defaults: { token: string; identity: string },
  now = Date.now(),
): AgentConfig | "help" {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        tasks: { type: "string" },
        "amount-cents": { type: "string" },
        currency: { type: "string" },
        scenario: { type: "string" },
        "settle-wait-ms": { type: "string" },
        faults: { type: "string" },
        "fault-rate": { type: "string" },
        seed: { type: "string" },
        resume: { type: "boolean" },
        "run-id": { type: "string" },
        concurrency: { type: "string" },
        "call-timeout-ms": { type: "string" },
        "lease-ttl": { type: "string" },
        "lease-wait-ms": { type: "string" },
        "webhook-url": { type: "string" },
        verbose: { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
    }));
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  if (values.help) return "help";
  const args = argsSchema.safeParse(values);
  if (!args.success)
    throw new UsageError(args.error.issues.map((i) => `--${i.path.join(".")}: ${i.message}`).join("\n"));
  const e = agentEnvSchema.safeParse(env);
  if (!e.success) throw new UsageError(e.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("\n"));
  let killAt: FaultPoint[];
  try {
    killAt = parseFaultPoints(e.data.VERITY_FAULT_KILL_AT);
  } catch (error) {
    throw new UsageError(`VERITY_FAULT_KILL_AT: ${error instanceof Error ? error.message : String(error)}`);
  }
  const a = args.data;
  return {
    scenario: a.scenario,
    settleWaitMs: a["settle-wait-ms"],
    verityUrl: e.data.VERITY_URL,
    token: e.data.VERITY_TOKEN ?? defaults.token,
    identity: e.data.VERITY_AGENT_IDENTITY ?? defaults.identity,
    killAt,
    tasks: a.tasks,
    amountCents: a["amount-cents"],
    currency: a.currency,
    faults: a.faults,
    faultRate: a["fault-rate"],
    seed: a.seed,
    resume: a.resume,
    callTimeoutMs: a["call-timeout-ms"],
    leaseTtlSeconds: a["lease-ttl"],
    leaseWaitMs: a["lease-wait-ms"] ?? (a.resume ? 35_000 : 0),
    concurrency: a.concurrency,
    runId: a["run-id"] ?? `ord-${now.toString(36)}`,
    ...(a["webhook-url"] ? { webhookUrl: a["webhook-url"] } : {}),
    ...(a["run-id"] ? { resumeRunId: a["run-id"] } : {}),
    verbose: a.verbose,
  };
}
