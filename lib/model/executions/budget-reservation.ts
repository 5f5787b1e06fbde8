import type { InvariantViolation } from "@/lib/core/errors";
import type { ExecutionStatus } from "@/lib/model/executions/execution-rules";
import { valueAtPointer } from "@/lib/model/tools/json-pointer";
import type { ToolDefinition } from "@/lib/model/tools/tool-definition";

/**
 * Budget reservation (seed 000, recovery step 2: "re-reserve budget"), as
 * pure rules. An irreversible call whose tool says where its request holds
 * an amount reserves that amount against the task's commitment
 * (`budget.currency_committed_usd`) when its intent is recorded, in the
 * intent's transaction (lib/use-cases/executions/budget-reservation.ts).
 *
 * A reservation is the execution row itself (`reserved_minor`,
 * `reserved_currency`), counted while its status says the effect may still
 * happen or has happened. It is released by the status alone — FAILED,
 * RECONCILED_FAILED, CANCELLED — so no write releases it and no write can
 * forget to; a retry moves the same row back to INTENT_RECORDED and is
 * checked again against the limits of that moment. Nothing about
 * reservations is ever read from a checkpoint.
 *
 * A commitment of 0 is what a task created without a budget holds
 * (createTask's default): it declares no limit, and reservations are
 * recorded but not limited. Any positive commitment limits them, in US
 * cents; a cost in another currency cannot be compared with it and is
 * refused rather than converted at a guessed rate.
 */

const COMMITMENT_CURRENCY = "usd";

/** The statuses in which the effect is known not to have happened: the reservation no longer counts. */
export const reservationReleasedStatuses: readonly ExecutionStatus[] = ["FAILED", "RECONCILED_FAILED", "CANCELLED"];

export interface Reservation {
  /** Minor units of `currency` (cents for usd). */
  minor: number;
  /** Lower-case ISO 4217. */
  currency: string;
}

/**
 * What an intent of `tool` with `request` reserves: null when it reserves
 * nothing (reversible, or a tool that moves no money), "unreadable" when
 * the tool promises an amount the request does not hold as a non-negative
 * integer and a lower-case currency (a fault, which never lowers the bar).
 */
export function reservationOf(tool: ToolDefinition, request: unknown): Reservation | "unreadable" | null {
  if (!tool.irreversible || !tool.amount) return null;
  const minor = valueAtPointer(request, tool.amount.amount_pointer);
  const currency = valueAtPointer(request, tool.amount.currency_pointer);
  if (typeof minor !== "number" || !Number.isSafeInteger(minor) || minor < 0) return "unreadable";
  if (typeof currency !== "string" || !/^[a-z]{3}$/.test(currency)) return "unreadable";
  return { minor, currency };
}

/** The reservations among a task's executions that still count. */
export function liveReservationsAmong(
  executions: ReadonlyArray<{ status: ExecutionStatus; reservedMinor: number | null; reservedCurrency: string | null }>,
): Reservation[] {
  return executions.flatMap((e) =>
    e.reservedMinor === null || e.reservedCurrency === null || reservationReleasedStatuses.includes(e.status)
      ? []
      : [{ minor: e.reservedMinor, currency: e.reservedCurrency }],
  );
}

/** Whether a task's commitment limits its reservations at all: none declared (0) records them unlimited. */
export function commitmentLimits(committedUsd: number): boolean {
  return commitmentMinorOf(committedUsd) !== 0;
}

/** The commitment in cents; 0 when none was declared. */
function commitmentMinorOf(committedUsd: number): number {
  return Math.round(committedUsd * 100);
}

interface ReservationCheck {
  committedUsd: number;
  /** The task's other live reservations (not the one being made). */
  live: readonly Reservation[];
  requested: Reservation | "unreadable";
}

interface ReservationRefusal {
  violation: InvariantViolation;
  message: string;
  committedMinor: number;
  reservedMinor: number;
  requestedMinor: number | null;
  currency: string | null;
}

/** Null when the reservation fits; otherwise why not, with the numbers a caller needs to see. */
export function reservationRefusalOf(check: ReservationCheck): ReservationRefusal | null {
  const committedMinor = commitmentMinorOf(check.committedUsd);
  if (committedMinor === 0) return null;
  const reservedMinor = check.live
    .filter((r) => r.currency === COMMITMENT_CURRENCY)
    .reduce((sum, r) => sum + r.minor, 0);
  const refuse = (invariant: string, message: string, requested: Reservation | null): ReservationRefusal => ({
    violation: { invariant, message },
    message,
    committedMinor,
    reservedMinor,
    requestedMinor: requested?.minor ?? null,
    currency: requested?.currency ?? null,
  });
  const { requested } = check;
  if (requested === "unreadable")
    return refuse(
      "budget_within_commitment",
      `The request holds no amount and currency where its tool says it does, so it cannot be reserved against the task's commitment of ${usd(committedMinor)}.`,
      null,
    );
  const foreign = [requested, ...check.live].find((r) => r.currency !== COMMITMENT_CURRENCY);
  if (foreign)
    return refuse(
      "budget_in_commitment_currency",
      `A cost in ${foreign.currency} cannot be counted against the task's commitment in USD (${usd(committedMinor)}); Verity does not convert currencies.`,
      requested,
    );
  if (reservedMinor + requested.minor > committedMinor)
    return refuse(
      "budget_within_commitment",
      `Reserving ${usd(requested.minor)} would exceed the task's commitment: committed ${usd(committedMinor)}, already reserved ${usd(reservedMinor)}, requested ${usd(requested.minor)}.`,
      requested,
    );
  return null;
}

function usd(minor: number): string {
  return `${(minor / 100).toFixed(2)} USD`;
}

/**
 * Whether the reservations a task holds already break its commitment as it
 * is now: what a restore checks, since a restored task resumes with them
 * (each is re-checked again when its call is resumed or retried).
 */
export function reservationsOverCommitment(
  committedUsd: number,
  live: readonly Reservation[],
): InvariantViolation | null {
  const committedMinor = commitmentMinorOf(committedUsd);
  if (committedMinor === 0) return null;
  const foreign = live.find((r) => r.currency !== COMMITMENT_CURRENCY);
  if (foreign)
    return {
      invariant: "budget_in_commitment_currency",
      message: `The task holds a reservation in ${foreign.currency}, which cannot be counted against its commitment in USD (${usd(committedMinor)}).`,
    };
  const reservedMinor = live.reduce((sum, r) => sum + r.minor, 0);
  if (reservedMinor <= committedMinor) return null;
  return {
    invariant: "budget_within_commitment",
    message: `The task's live reservations (${usd(reservedMinor)}) exceed its current commitment of ${usd(committedMinor)}.`,
  };
}
