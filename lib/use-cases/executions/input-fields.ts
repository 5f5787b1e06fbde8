import { z } from "zod";
import { boundedJson } from "@/lib/core/json-bounds";

/** Fields the ledger's input schemas (record-intent.ts, mark-sent.ts, record-outcome.ts) share. */
export const fencingTokenSchema = z.string().regex(/^[0-9]{1,18}$/, "must be the decimal fencing token of your lease");
/** A tool's request, result or evidence: free-form, bounded in depth and size (lib/core/json-bounds.ts). */
export const jsonObjectSchema = boundedJson(z.record(z.string(), z.unknown()));
