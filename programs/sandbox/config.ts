import path from "node:path";
import { z } from "zod";
import type { SandboxOptions } from "@/programs/sandbox/server";

/**
 * The standalone sandbox's settings (scripts/sandbox.ts). Validated here,
 * from an env record the caller passes in; these belong in lib/config/env.ts, the
 * one reader of process.env, once that module takes them.
 */
const flag = z.enum(["true", "false"]).transform((v) => v === "true");

export const sandboxEnvSchema = z.object({
  SANDBOX_PORT: z.coerce.number().int().min(0).max(65535).default(4010),
  SANDBOX_HOST: z.string().min(1).default("127.0.0.1"),
  /** Journal file; "memory" keeps state in memory only. Default: <data dir>/sandbox/journal.jsonl. */
  SANDBOX_JOURNAL: z.string().min(1).optional(),
  SANDBOX_WEBHOOK_URL: z.url().optional(),
  SANDBOX_WEBHOOK_SECRET: z.string().min(16, "SANDBOX_WEBHOOK_SECRET must be at least 16 characters").optional(),
  /** Where the /stripe surface's events go (Verity's /api/v1/events/stripe), signed with SANDBOX_STRIPE_WEBHOOK_SECRET. */
  SANDBOX_STRIPE_WEBHOOK_URL: z.url().optional(),
  SANDBOX_STRIPE_WEBHOOK_SECRET: z.string().min(16).optional(),
  SANDBOX_ALLOW_RESET: flag.default(false),
  /** Global faults from the start, comma-separated: "drop_response,latency=200". */
  SANDBOX_FAULTS: z.string().optional(),
  SANDBOX_FAULT_PROBABILITY: z.coerce.number().min(0).max(1).optional(),
  SANDBOX_FAULT_SEED: z.coerce.number().int().min(0).max(0xffffffff).optional(),
  VERITY_DATA_DIR: z.string().min(1).default(".data"),
});

export function sandboxOptionsFromEnv(env: Record<string, string | undefined>): SandboxOptions {
  const parsed = sandboxEnvSchema.safeParse(env);
  if (!parsed.success) {
    throw new Error(
      `Invalid sandbox configuration:\n${parsed.error.issues.map((i) => `  ${i.path.join(".")}: ${i.message}`).join("\n")}`,
    );
  }
  const e = parsed.data;
  const journal = e.SANDBOX_JOURNAL ?? path.join(e.VERITY_DATA_DIR, "sandbox", "journal.jsonl");
  const faults = e.SANDBOX_FAULTS?.split(",")
    .map((f) => f.trim())
    .filter(Boolean);
  return {
    port: e.SANDBOX_PORT,
    host: e.SANDBOX_HOST,
    journalPath: journal === "memory" ? undefined : path.resolve(journal),
    webhookUrl: e.SANDBOX_WEBHOOK_URL,
    webhookSecret: e.SANDBOX_WEBHOOK_SECRET,
    stripeWebhookUrl: e.SANDBOX_STRIPE_WEBHOOK_URL,
    stripeWebhookSecret: e.SANDBOX_STRIPE_WEBHOOK_SECRET,
    allowReset: e.SANDBOX_ALLOW_RESET,
    faults: faults?.length
      ? { faults, probability: e.SANDBOX_FAULT_PROBABILITY, seed: e.SANDBOX_FAULT_SEED }
      : undefined,
  };
}
