import { z } from "zod";
import { AuditEntryResourceSchema } from "@/lib/adapters/api/audit-resources";
import { auditExportFormats } from "@/lib/use-cases/audit/audit-export";
import { AuditSearchSchema, auditOrders } from "@/lib/use-cases/audit/audit-search";

/** GET /api/v1/audit/search: the search's filters, the order, and the keyset page. */
export const AuditSearchQuerySchema = AuditSearchSchema.extend({
  order: z
    .enum(auditOrders)
    .default("asc")
    .meta({ description: "asc: oldest first (default); desc: newest first. Pass the same order with the cursor." }),
  cursor: z.string().max(512).optional(),
  limit: z.coerce.number().int().min(1).max(500).default(100),
});

/** GET /api/v1/audit/export: every filter of the search, and the format. */
export const AuditSearchExportQuerySchema = AuditSearchSchema.extend({
  format: z.enum(auditExportFormats).default("jsonl"),
});

export const AuditSearchPageSchema = z.object({
  items: z.array(AuditEntryResourceSchema),
  next_cursor: z.string().nullable(),
  matched_executions: z.int().nullable().meta({
    description:
      "With tool, idempotency_key or execution: how many executions matched (0 explains an empty page); otherwise null.",
  }),
});
