import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { z } from "zod";

/**
 * pino's level names, most severe first. `info` (the default) is what changed:
 * settled executions, delivered messages, alerts, retention runs; `debug`
 * adds what was looked at (each background tick, each sandbox request).
 */
const logLevelSchema = z.preprocess(
  (v) => (v === "" ? undefined : v),
  z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
);
export type LogLevel = z.infer<typeof logLevelSchema>;

/** An optional URL where an empty value means unset (as shells and compose files write it). */
const optionalUrl = z.preprocess((v) => (v === "" ? undefined : v), z.url().optional());

/**
 * The only reader of process.env. Every value is validated once, at first
 * use, so a wrong setting fails loudly at boot instead of deep in a request.
 * The defaults make the embedded mode (PGlite in `.data/`) work with no
 * configuration at all.
 */
const envSchema = z.object({
  NODE_ENV: z.enum(["development", "production", "test"]).default("development"),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, "DATABASE_URL must be a postgresql:// URL; leave it unset for the embedded database")
    .optional(),
  VERITY_DATA_DIR: z.string().min(1).default(".data"),
  VERITY_DB_POOL_SIZE: z.coerce.number().int().min(1).max(200).default(10),
  VERITY_MAX_BODY_BYTES: z.coerce.number().int().min(1024).max(10_485_760).default(65_536),
  /** A LangGraph checkpoint or pending-writes body (/api/v1/graph/*): a graph's state, larger than any other request. */
  VERITY_MAX_GRAPH_BODY_BYTES: z.coerce.number().int().min(65_536).max(104_857_600).default(8_388_608),
  NEXTAUTH_SECRET: z.string().min(32, "NEXTAUTH_SECRET must be at least 32 characters").optional(),
  NEXTAUTH_URL: z.url().optional(),
  PORT: z.coerce.number().int().min(1).max(65535).default(3000),
  /** The external systems' base URL (the sandbox provider by default; `npm start` runs it on SANDBOX_PORT). */
  VERITY_SANDBOX_URL: z.url().optional(),
  SANDBOX_PORT: z.coerce.number().int().min(1).max(65535).default(4010),
  /**
   * scrypt's cost N for new password hashes (lib/core/passwords.ts): OWASP's
   * 2^17 by default. A power of two from 2^14, the scrypt paper's interactive
   * floor; the test servers use that floor so that hundreds of sign-ins do not
   * dominate the suite's time. Every hash carries its own N, so hashes made
   * under another setting still verify, and a weaker one is rehashed at the
   * next sign-in.
   */
  VERITY_PASSWORD_SCRYPT_N: z.coerce
    .number()
    .int()
    .min(2 ** 14)
    .max(2 ** 20)
    .refine((n) => Number.isInteger(Math.log2(n)), "VERITY_PASSWORD_SCRYPT_N must be a power of two")
    .default(2 ** 17),
  /** Irreversible actions at or above this amount need two different operators' approval. */
  VERITY_FOUR_EYES_THRESHOLD_CENTS: z.coerce.number().int().min(0).default(50_000),
  /** How often the server reconciles unknown outcomes and delivers the outbox; 0 turns the loop off. */
  VERITY_RECONCILE_INTERVAL_MS: z.coerce.number().int().min(0).default(5_000),
  /**
   * The longest lease an agent may take or renew at once (POST /api/v1/tasks/{id}/lease and /renew):
   * a longer ttl_seconds is refused naming the field, so a worker that dies holds a task at most this long.
   */
  VERITY_MAX_LEASE_TTL_SECONDS: z.coerce.number().int().min(60).max(3600).default(300),
  /** A SENT execution older than this is treated as an unknown outcome (its worker is presumed dead). */
  VERITY_SENT_TIMEOUT_MS: z.coerce.number().int().min(1_000).default(30_000),
  /** How often the server's invariant monitor makes a pass (lib/use-cases/monitor/run-monitor-pass.ts); 0 turns it off. */
  VERITY_MONITOR_INTERVAL_MS: z.coerce.number().int().min(0).default(30_000),
  /**
   * The database's live announcements (docs/live-updates.md): `off` stops every announcing trigger at
   * the database (no pg_notify, none of its commit cost) and the console's pages poll; `on` starts
   * them again. Written to the database at this server's start, so the last server started decides
   * for all; unset leaves the database's switch as it is (on in a new database).
   */
  VERITY_LIVE_UPDATES: z.enum(["on", "off"]).optional(),
  /** Rows each monitor check reads per pass (keyset batches): bounded work however large the tables grow. */
  VERITY_MONITOR_BATCH: z.coerce.number().int().min(1).max(10_000).default(500),
  /** Overrides every connector's idempotency window (lib/connectors/effects.ts), e.g. a short one for tests. */
  VERITY_IDEMPOTENCY_WINDOW_MS: z.coerce.number().int().min(1).optional(),
  /**
   * Audit retention (lib/use-cases/audit/audit-retention.ts): the background loop
   * deletes audit entries older than this many days, except under a legal
   * hold. Unset (the default): keep every entry forever.
   */
  VERITY_AUDIT_RETENTION_DAYS: z.preprocess(
    (v) => (v === "" ? undefined : v),
    z.coerce.number().int().min(1).max(36_500).optional(),
  ),
  /**
   * Task-data retention (lib/use-cases/retention/apply-task-retention.ts,
   * docs/retention.md): the background loop deletes a finished task's data
   * from every store, its audit chains included, this many days after its
   * last activity, except under a legal hold. Unset (the default): keep it.
   */
  VERITY_TASK_RETENTION_DAYS: z.preprocess(
    (v) => (v === "" ? undefined : v),
    z.coerce.number().int().min(1).max(36_500).optional(),
  ),
  /** How often each retention (audit entries, task data) runs at most (per server process); at least a minute. */
  VERITY_AUDIT_RETENTION_INTERVAL_MS: z.coerce.number().int().min(60_000).default(3_600_000),
  /** Where the outbox dispatcher delivers announcements (at least once, Idempotency-Key = message id); unset keeps them pending. */
  VERITY_OUTBOX_WEBHOOK_URL: z.url().optional(),
  /** Secret the outbox signs each delivery with (Verity-Signature); generated into the data folder when unset. */
  VERITY_OUTBOX_SECRET: z.string().min(32, "VERITY_OUTBOX_SECRET must be at least 32 characters").optional(),
  /**
   * Encryption at rest (docs/encryption.md): "on" (the default) seals
   * confidential values with the tenant's data key before they are stored;
   * "off" stores new values in the clear (benchmarks compare the two). Values
   * sealed earlier stay readable either way.
   */
  VERITY_ENCRYPTION_AT_REST: z.enum(["on", "off"]).default("on"),
  /**
   * The local key provider's keyring (lib/config/keyring.ts): each tenant's
   * key-encryption keys, which wrap the data keys stored in the database.
   * Default: keys/keyring.json in the data folder, created 0600 on first use.
   * Back it up apart from the database: without it, sealed values never open.
   */
  VERITY_KEYRING_FILE: z.string().min(1).optional(),
  /** Shared secret of the sandbox's signed webhooks; generated into the data folder when unset. */
  VERITY_SANDBOX_WEBHOOK_SECRET: z.string().min(16).optional(),
  /**
   * Secret Verity signs its lookup requests to a tool owner's endpoint with
   * (reconciliation method "http": `Verity-Signature`, the outbox's scheme);
   * generated into the data folder when unset.
   */
  VERITY_LOOKUP_SECRET: z.string().min(32, "VERITY_LOOKUP_SECRET must be at least 32 characters").optional(),
  /**
   * Which provider `payments.refund` reaches: the sandbox's own API (the
   * default) or Stripe's (lib/connectors/stripe/), at STRIPE_API_BASE
   * (https://api.stripe.com when unset; the sandbox speaks the same subset on
   * its /stripe prefix) with STRIPE_API_KEY.
   */
  VERITY_PAYMENTS_PROVIDER: z.enum(["sandbox", "stripe"]).default("sandbox"),
  STRIPE_API_BASE: z.url().optional(),
  STRIPE_API_KEY: z.string().min(1).optional(),
  /** Stripe's webhook signing secret (whsec_…) for POST /api/v1/events/stripe. */
  STRIPE_WEBHOOK_SECRET: z.string().min(1).optional(),
  /** "false" when the sandbox runs elsewhere (then VERITY_SANDBOX_URL points at it). */
  VERITY_START_SANDBOX: z
    .enum(["true", "false"])
    .default("true")
    .transform((v) => v === "true"),
  /**
   * Demo users, the demo agent token and demo tasks. Unset: only in the
   * zero-configuration quick start (embedded database, loopback bind); see
   * demoDataWanted. A deployment without demo data starts with no accounts
   * and prints a one-time setup link (scripts/start.ts).
   */
  VERITY_DEMO_DATA: z.enum(["true", "false"]).optional(),
  /** The address the console listens on. Loopback by default: reaching it from elsewhere is a choice made here. */
  VERITY_HOST: z.string().min(1).default("127.0.0.1"),
  /** With demo data, on the database's first start: real demo refund agent runs (faults included) once the console is up. */
  VERITY_DEMO_AGENT_RUNS: z
    .enum(["0", "1", "true", "false"])
    .default("true")
    .transform((v) => v === "1" || v === "true"),
  /**
   * Checkpoint signing keys, `id=secret` separated by commas, newest first:
   * the first signs new checkpoints unless VERITY_CHECKPOINT_ACTIVE_KEY names
   * another; the rest still verify the checkpoints they signed. Unset: one
   * key (`local-1`) generated into the data folder.
   */
  VERITY_CHECKPOINT_KEYS: z
    .string()
    .regex(
      /^\s*[A-Za-z0-9][A-Za-z0-9._-]{0,63}=[^,\s]{32,}\s*(,\s*[A-Za-z0-9][A-Za-z0-9._-]{0,63}=[^,\s]{32,}\s*)*$/,
      "VERITY_CHECKPOINT_KEYS must be id=secret pairs separated by commas; ids of letters, digits, . _ -; secrets of at least 32 characters",
    )
    .optional(),
  VERITY_CHECKPOINT_ACTIVE_KEY: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/)
    .optional(),
  /**
   * Browser tests only (playwright.config.ts): when seeding a fresh demo
   * database, also create task `e2e-long-history` with this many events,
   * each a real transition (programs/demo/long-history.ts). 0, the default, never
   * creates it.
   */
  VERITY_E2E_LONG_HISTORY: z.coerce.number().int().min(0).max(200_000).default(0),
  /** A console session ends this many hours after its sign-in however active it is (besides the 8-hour idle expiry). */
  VERITY_SESSION_MAX_AGE_HOURS: z.coerce
    .number()
    .min(0.01)
    .max(24 * 30)
    .default(12),
  /**
   * Single sign-on (OpenID Connect) beside the password sign-in, on when the
   * issuer is set (then the client id and secret and the role map are
   * required): lib/adapters/auth/oidc.ts. The role claim names the ID
   * token or userinfo claim whose value(s) VERITY_OIDC_ROLE_MAP maps to
   * Verity roles, `value=role` pairs separated by commas.
   */
  VERITY_OIDC_ISSUER: z.url().optional(),
  VERITY_OIDC_CLIENT_ID: z.string().min(1).optional(),
  VERITY_OIDC_CLIENT_SECRET: z.string().min(1).optional(),
  VERITY_OIDC_ROLE_CLAIM: z.string().min(1).default("groups"),
  VERITY_OIDC_ROLE_MAP: z.string().min(1).optional(),
  /** Lowest level logged (lib/config/log.ts). */
  VERITY_LOG_LEVEL: logLevelSchema,
  /**
   * OpenTelemetry traces (lib/config/tracing.ts, docs/observability.md): the
   * collector's OTLP/HTTP base URL, the standard variable (traces go to
   * <endpoint>/v1/traces; OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, when set, is
   * used as it is). Unset: no tracer is registered and nothing is exported.
   */
  OTEL_EXPORTER_OTLP_ENDPOINT: optionalUrl,
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: optionalUrl,
  OTEL_SERVICE_NAME: z.preprocess((v) => (v === "" ? undefined : v), z.string().min(1).default("verity")),
  /** How long finished spans wait to be sent in one batch (the SDK's own variable and default). */
  OTEL_BSP_SCHEDULE_DELAY: z.coerce.number().int().min(1).max(60_000).default(5_000),
  /**
   * The bearer token Prometheus presents at GET /metrics (app/metrics/route.ts).
   * Unset: /metrics answers 404, as if it did not exist; a wrong token is a
   * 401 problem+json. The scrape is platform-wide (every tenant's gauges).
   */
  VERITY_METRICS_TOKEN: z.preprocess(
    (v) => (v === "" ? undefined : v),
    z.string().min(16, "VERITY_METRICS_TOKEN must be at least 16 characters").optional(),
  ),
});

export type Env = Omit<z.infer<typeof envSchema>, "VERITY_DEMO_DATA"> & {
  /** Whether this start is the demo (demoDataWanted): seeds and offers the demo accounts, or refuses a database holding them. */
  VERITY_DEMO_DATA: boolean;
  /** Base URL of the payment provider and CRM connectors. */
  sandboxUrl: string;
  /** Absolute data folder: the embedded database and generated local secrets live here. */
  dataDir: string;
  /** Absolute folder of the embedded PGlite database (unused with DATABASE_URL). */
  pgliteDir: string;
  database: { kind: "pglite"; dir: string } | { kind: "postgres"; url: string };
};

/** Validates variables exactly as getEnv does, without reading process.env or caching: tests and configuration checks. */
export function parseEnvValues(source: Record<string, string | undefined>) {
  return envSchema.safeParse(source);
}

let cached: Env | undefined;

/** 127.0.0.0/8, ::1 and localhost: an address no other machine reaches. */
export function isLoopbackHost(host: string): boolean {
  const h = host
    .trim()
    .toLowerCase()
    .replace(/^\[|\]$/g, "");
  return h === "localhost" || h === "::1" || /^127(\.\d{1,3}){3}$/.test(h);
}

/**
 * Demo data only where nobody else can reach it and nothing real is stored:
 * an explicit VERITY_DEMO_DATA wins; unset, the quick start (no
 * DATABASE_URL, a loopback bind) is the demo and anything else is not.
 */
export function demoDataWanted(values: {
  VERITY_DEMO_DATA?: "true" | "false";
  DATABASE_URL?: string;
  VERITY_HOST: string;
}): boolean {
  if (values.VERITY_DEMO_DATA !== undefined) return values.VERITY_DEMO_DATA === "true";
  return !values.DATABASE_URL && isLoopbackHost(values.VERITY_HOST);
}

/**
 * VERITY_LOG_LEVEL alone, validated by the same rule as getEnv's: the logger
 * (lib/config/log.ts) is loaded by programs that never read the rest of the
 * configuration (`npm run sandbox`), and must not fail because of it.
 */
export function getLogLevel(): LogLevel {
  const parsed = logLevelSchema.safeParse(process.env.VERITY_LOG_LEVEL);
  if (!parsed.success)
    throw new Error(`Invalid configuration:\n  VERITY_LOG_LEVEL: ${parsed.error.issues[0]?.message ?? "invalid"}`);
  return parsed.data;
}

export function getEnv(): Env {
  if (cached) return cached;
  const parsed = envSchema.safeParse(process.env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join(".")}: ${i.message}`);
    throw new Error(`Invalid configuration:\n${lines.join("\n")}`);
  }
  const dataDir = path.resolve(parsed.data.VERITY_DATA_DIR);
  const pgliteDir = path.join(dataDir, "pglite");
  cached = {
    ...parsed.data,
    VERITY_DEMO_DATA: demoDataWanted(parsed.data),
    sandboxUrl: parsed.data.VERITY_SANDBOX_URL ?? `http://127.0.0.1:${parsed.data.SANDBOX_PORT}`,
    dataDir,
    pgliteDir,
    database: parsed.data.DATABASE_URL
      ? { kind: "postgres", url: parsed.data.DATABASE_URL }
      : { kind: "pglite", dir: pgliteDir },
  };
  return cached;
}

/**
 * The session-signing secret. When none is configured, one is generated on
 * first use and kept in the data folder (never in the repo), so a fresh clone
 * needs no env file and sessions survive a restart.
 */
export function getAuthSecret(): string {
  return getEnv().NEXTAUTH_SECRET ?? localSecret("auth-secret");
}

/** The secret the sandbox signs its webhooks with (same rule as the session secret). */
export function getSandboxWebhookSecret(): string {
  return getEnv().VERITY_SANDBOX_WEBHOOK_SECRET ?? localSecret("sandbox-webhook-secret");
}

/** The secret outbox deliveries are signed with (same rule as the session secret). */
export function getOutboxSecret(): string {
  return getEnv().VERITY_OUTBOX_SECRET ?? localSecret("outbox-secret");
}

/** scrypt's N for new password hashes (VERITY_PASSWORD_SCRYPT_N). */
export function passwordScryptN(): number {
  return getEnv().VERITY_PASSWORD_SCRYPT_N;
}

/** The secret lookup requests to a tool owner are signed with (same rule as the session secret). */
export function getLookupSecret(): string {
  return getEnv().VERITY_LOOKUP_SECRET ?? localSecret("lookup-secret");
}

/** The id of the checkpoint key generated into the data folder when none is configured. */
export const LOCAL_CHECKPOINT_KEY_ID = "local-1";

let checkpointKeys: { activeKeyId: string; keys: Readonly<Record<string, string>> } | undefined;

/**
 * The checkpoint signing keyring (lib/model/checkpoints/checkpoint-keys.ts). A
 * configured active key that is not in the ring fails here, at first use,
 * rather than as an unverifiable checkpoint later.
 */
export function getCheckpointKeys(): { activeKeyId: string; keys: Readonly<Record<string, string>> } {
  if (checkpointKeys) return checkpointKeys;
  const env = getEnv();
  if (!env.VERITY_CHECKPOINT_KEYS) {
    if (env.VERITY_CHECKPOINT_ACTIVE_KEY && env.VERITY_CHECKPOINT_ACTIVE_KEY !== LOCAL_CHECKPOINT_KEY_ID) {
      throw new Error(
        `Invalid configuration:\n  VERITY_CHECKPOINT_ACTIVE_KEY: "${env.VERITY_CHECKPOINT_ACTIVE_KEY}" is not in VERITY_CHECKPOINT_KEYS (unset)`,
      );
    }
    checkpointKeys = {
      activeKeyId: LOCAL_CHECKPOINT_KEY_ID,
      keys: { [LOCAL_CHECKPOINT_KEY_ID]: localSecret("checkpoint-key") },
    };
    return checkpointKeys;
  }
  const keys: Record<string, string> = {};
  const order: string[] = [];
  for (const pair of env.VERITY_CHECKPOINT_KEYS.split(",")) {
    const [id, secret] = pair.trim().split(/=(.*)/s) as [string, string];
    if (Object.hasOwn(keys, id))
      throw new Error(`Invalid configuration:\n  VERITY_CHECKPOINT_KEYS: key id "${id}" appears twice`);
    keys[id] = secret;
    order.push(id);
  }
  const activeKeyId = env.VERITY_CHECKPOINT_ACTIVE_KEY ?? order[0]!;
  if (!Object.hasOwn(keys, activeKeyId)) {
    throw new Error(
      `Invalid configuration:\n  VERITY_CHECKPOINT_ACTIVE_KEY: "${activeKeyId}" is not in VERITY_CHECKPOINT_KEYS (${order.join(", ")})`,
    );
  }
  checkpointKeys = { activeKeyId, keys };
  return checkpointKeys;
}

function localSecret(name: string): string {
  const env = getEnv();
  const file = path.join(env.dataDir, name);
  if (existsSync(file)) return readFileSync(file, "utf8").trim();
  mkdirSync(env.dataDir, { recursive: true, mode: 0o700 });
  const secret = randomBytes(32).toString("base64url");
  // "wx" fails if another process created it first; then read theirs.
  try {
    writeFileSync(file, secret, { mode: 0o600, flag: "wx" });
    return secret;
  } catch {
    return readFileSync(file, "utf8").trim();
  }
}
