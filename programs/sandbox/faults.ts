import { z } from "zod";
import { seededRandom } from "@/lib/core/seeded-random";

/**
 * Fault injection. Each fault is a named moment at which a real provider can
 * fail (the dbos "debug trigger point" idea), placed in the mutation pipeline
 * (programs/sandbox/mutation.ts) around the commit:
 *
 *   latency=<ms>          wait before processing (the key is already claimed)
 *   error_before_commit   503 not_processed; nothing stored
 *   error_after_commit    stored, then 500 internal_error
 *   timeout_after_commit  stored, then never answered
 *   drop_response         stored, then the socket is destroyed
 *   duplicate_webhook     the refund.succeeded event is delivered twice
 *
 * The four "outcome" faults exclude each other: a request can end only one
 * way. A request header names its faults exactly; the global configuration
 * applies with a probability from a seeded generator, so a chaos run with the
 * same seed and the same sequence of requests injects the same faults.
 */

export const outcomeFaults = [
  "error_before_commit",
  "error_after_commit",
  "timeout_after_commit",
  "drop_response",
] as const;
export type OutcomeFault = (typeof outcomeFaults)[number];

export type Fault = { kind: "latency"; ms: number } | { kind: OutcomeFault } | { kind: "duplicate_webhook" };

export const MAX_LATENCY_MS = 60_000;

/** What one request will suffer. */
export interface FaultPlan {
  latencyMs: number;
  outcome: OutcomeFault | null;
  duplicateWebhook: boolean;
}

export const noFaults: FaultPlan = Object.freeze({ latencyMs: 0, outcome: null, duplicateWebhook: false });

export class FaultSyntaxError extends Error {
  override name = "FaultSyntaxError";
}

function isOutcomeFault(name: string): name is OutcomeFault {
  return (outcomeFaults as readonly string[]).includes(name);
}

export function parseFault(text: string): Fault {
  const item = text.trim();
  const latency = /^latency=(\d{1,6})$/.exec(item);
  if (latency) {
    const ms = Number(latency[1]);
    if (ms > MAX_LATENCY_MS) throw new FaultSyntaxError(`latency is at most ${MAX_LATENCY_MS} ms, got ${ms}`);
    return { kind: "latency", ms };
  }
  if (isOutcomeFault(item)) return { kind: item };
  if (item === "duplicate_webhook") return { kind: "duplicate_webhook" };
  throw new FaultSyntaxError(
    `unknown fault "${item}"; known: latency=<ms>, ${[...outcomeFaults, "duplicate_webhook"].join(", ")}`,
  );
}

export function formatFault(fault: Fault): string {
  return fault.kind === "latency" ? `latency=${fault.ms}` : fault.kind;
}

/** `X-Sandbox-Fault: latency=200, drop_response`: the exact faults of one request. */
export function planFromHeader(header: string): FaultPlan {
  const faults = header
    .split(",")
    .filter((s) => s.trim() !== "")
    .map(parseFault);
  const outcomes = faults.filter((f): f is { kind: OutcomeFault } => isOutcomeFault(f.kind));
  if (outcomes.length > 1) {
    throw new FaultSyntaxError(`a request can end only one way; choose one of ${outcomes.map(formatFault).join(", ")}`);
  }
  return {
    latencyMs: faults.reduce((sum, f) => sum + (f.kind === "latency" ? f.ms : 0), 0),
    outcome: outcomes[0]?.kind ?? null,
    duplicateWebhook: faults.some((f) => f.kind === "duplicate_webhook"),
  };
}

export const faultScopes = ["writes", "all"] as const;
export type FaultScope = (typeof faultScopes)[number];

export const globalFaultConfigSchema = z.strictObject({
  faults: z.array(z.string()).max(20),
  /** Chance that a request gets the faults; 1 when omitted. */
  probability: z.number().min(0).max(1).optional(),
  /** Seed of the generator; a random one (reported back) when omitted. */
  seed: z.number().int().min(0).max(0xffffffff).optional(),
  /** "writes" (default): only POST /v1/…; "all": lookups and lists too. */
  scope: z.enum(faultScopes).optional(),
});
export type GlobalFaultConfigInput = z.infer<typeof globalFaultConfigSchema>;

export interface GlobalFaultState {
  faults: string[];
  probability: number;
  seed: number;
  scope: FaultScope;
  /** Requests the generator has decided so far. */
  draws: number;
  /** Of those, how many got the faults. */
  hits: number;
}

/**
 * The server-wide faults. Every eligible request draws once (hit or miss),
 * and a hit with several outcome faults draws once more to pick one, so the
 * decisions depend only on the seed and the order of requests.
 */
export class GlobalFaults {
  private faults: Fault[] = [];
  private probability = 1;
  private seed = 0;
  private scope: FaultScope = "writes";
  private random = seededRandom(0);
  private draws = 0;
  private hits = 0;

  /** Throws FaultSyntaxError for an unknown fault. */
  configure(input: GlobalFaultConfigInput): GlobalFaultState {
    const faults = input.faults.map(parseFault);
    this.faults = faults;
    this.probability = input.probability ?? 1;
    this.seed = input.seed ?? Math.floor(Math.random() * 0xffffffff);
    this.scope = input.scope ?? "writes";
    this.random = seededRandom(this.seed);
    this.draws = 0;
    this.hits = 0;
    return this.state();
  }

  clear(): void {
    this.configure({ faults: [], probability: 1, seed: 0 });
  }

  state(): GlobalFaultState {
    return {
      faults: this.faults.map(formatFault),
      probability: this.probability,
      seed: this.seed,
      scope: this.scope,
      draws: this.draws,
      hits: this.hits,
    };
  }

  draw(isWrite: boolean): FaultPlan {
    if (this.faults.length === 0 || (this.scope === "writes" && !isWrite)) return noFaults;
    this.draws++;
    if (!(this.random() < this.probability)) return noFaults;
    this.hits++;
    const outcomes = this.faults.filter((f): f is { kind: OutcomeFault } => isOutcomeFault(f.kind));
    const picked = outcomes.length > 1 ? outcomes[Math.floor(this.random() * outcomes.length)] : outcomes[0];
    return {
      latencyMs: this.faults.reduce((sum, f) => sum + (f.kind === "latency" ? f.ms : 0), 0),
      outcome: picked?.kind ?? null,
      duplicateWebhook: this.faults.some((f) => f.kind === "duplicate_webhook"),
    };
  }
}
