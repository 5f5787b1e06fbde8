/**
 * A tool as data: what Verity needs to know about an external call it does
 * not make itself to keep its guarantees (write-ahead intent, one key per
 * call, unknown outcomes reconciled before any retry, four eyes, the
 * instruction guard, checkpoints before irreversible effects). The JSON
 * document below is exactly what `POST /api/v1/tools` accepts and
 * `GET /api/v1/tools/{name}` returns (lib/model/tools/validate-tool-definition.ts checks it).
 */

import type { ToolDataClasses } from "@/lib/model/data-classes";

/**
 * How Verity finds out whether an effect whose outcome it does not know
 * happened (the reconciler, a review's "accept evidence", a success report's
 * confirmation):
 *
 *   connector  the built-in tools only: Verity's own provider connectors (lib/connectors/effects.ts)
 *   http       Verity POSTs the tool owner's lookup endpoint, signed (docs/tools.md)
 *   worker     a lookup is queued; a worker of the tool claims and answers it
 *              (lib/stores/effect-lookups.ts); none before the deadline → people
 *   manual     nobody can be asked: every unknown outcome goes to the review queue
 */
export type ToolReconciliation =
  | { method: "connector" }
  | { method: "http"; url: string }
  | { method: "worker"; deadline_seconds: number }
  | { method: "manual" };

/** Where a request holds the money it moves (JSON pointers into the request). */
export interface ToolAmount {
  /** An integer in the currency's minor units, e.g. `/amount_cents`. */
  amount_pointer: string;
  /** A lower-case ISO 4217 code, e.g. `/currency`. */
  currency_pointer: string;
}

export interface ToolDefinition {
  /** `payments.refund`: the alphabet of agent token scopes. */
  name: string;
  /** 1, 2, …: a version is immutable once registered; a change is a new version. */
  version: number;
  description: string;
  /** The server's fact, never the caller's: an irreversible call is held to every rule of unknown outcomes. */
  irreversible: boolean;
  /** JSON Schema (draft-07) of the request; an intent's request is validated against it (Ajv). */
  request_schema: Record<string, unknown>;
  /** The instruction-ledger topic that governs the tool (lib/stores/instructions.ts). */
  topic: string;
  /** How long the provider answers a repeat of a key with the first result; past it an unknown outcome can no longer be retried safely. */
  idempotency_window_seconds: number;
  /** Where the request holds its amount, for four eyes (and the task's budget); absent for a tool that moves no money. */
  amount?: ToolAmount;
  /** The request fields (JSON pointers) the provider's record must repeat for it to be this effect. */
  identity_fields: string[];
  /** Attempts of one call (all under its key) whose effect the provider confirms never happened, before a person decides. */
  max_attempts: number;
  /** The tool that undoes a known-succeeded effect of this one, if any. */
  compensating_tool?: string;
  /**
   * How a person's compensation (a review's "accept evidence & compensate")
   * builds the compensating tool's request from the effect it undoes: each
   * field a JSON pointer into `{ request, result }` of that execution, e.g.
   * `{ "release_id": "/result/release_id" }`. Absent: the effect's own
   * request. An agent compensating (recordIntent's `compensates_execution_id`)
   * writes its own request; either way the compensating tool's schema checks it.
   */
  compensation_request?: Record<string, string>;
  reconciliation: ToolReconciliation;
  /**
   * How sensitive each field of the request, the result and the evidence is
   * (JSON pointers → public | internal | confidential | restricted,
   * lib/model/data-classes.ts). Undeclared fields are confidential; restricted
   * ones are masked for callers without clearance.
   */
  data_classes?: ToolDataClasses;
}

/** `name@version`: the id of a tool version (tool_versions.id). */
export function toolVersionId(name: string, version: number): string {
  return `${name}@${version}`;
}
