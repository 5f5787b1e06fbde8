import { z } from "zod";

/** Fields the ledger's input schemas (record-intent.ts, mark-sent.ts, record-outcome.ts) share. */
export const fencingTokenSchema = z.string().regex(/^[0-9]{1,18}$/, "must be the decimal fencing token of your lease");
export const jsonObjectSchema = z.record(z.string(), z.unknown());
