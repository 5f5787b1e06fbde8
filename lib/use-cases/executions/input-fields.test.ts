import { describe, expect, it } from "vitest";
import type { z } from "zod";
import { parseOrThrow } from "@/lib/core/validation";
import { AppError } from "@/lib/core/errors";
import { RecordOutcomeInputSchema } from "@/lib/use-cases/executions/record-outcome";
import { RecordIntentInputSchema } from "@/lib/use-cases/executions/record-intent";
import { InboundEventSchema } from "@/lib/stores/messaging";

/** Every free-form JSON field of the API is bounded by lib/core/json-bounds.ts (issue 11). */

/** `{"a":{"a":…{"a":1}…}}` nested `depth` deep. */
function nested(depth: number): Record<string, unknown> {
  let value: Record<string, unknown> = { a: 1 };
  for (let i = 1; i < depth; i++) value = { a: value };
  return value;
}

function fieldErrors(schema: z.ZodType, input: unknown): Array<{ field: string; message: string }> {
  try {
    parseOrThrow(schema, input);
  } catch (error) {
    if (error instanceof AppError) return error.details.errors ?? [];
    throw error;
  }
  return [];
}

describe("boundedJson on the API's free-form fields", () => {
  it("refuses evidence nested 1,500 deep (9 KB, issue 11's reproduction) with a 400 naming evidence", () => {
    const evidence = nested(1500);
    expect(JSON.stringify(evidence).length).toBeLessThan(10_000);
    expect(fieldErrors(RecordOutcomeInputSchema, { attempt_id: "e.1", outcome: "succeeded", evidence })).toEqual([
      { field: "evidence", message: "nests deeper than 32 levels" },
    ]);
  });

  it("refuses a result or request over 64 KB, and takes one at the bounds", () => {
    const big = { blob: "x".repeat(70_000) };
    expect(fieldErrors(RecordOutcomeInputSchema, { attempt_id: "e.1", outcome: "failed", result: big })).toEqual([
      { field: "result", message: expect.stringMatching(/^is 70011 bytes of JSON, more than 65536$/) },
    ]);
    const intent = { tool_call_id: "refund", tool: "payments.refund", request: nested(33), expected_version: 1 };
    expect(fieldErrors(RecordIntentInputSchema, intent).map((e) => e.field)).toEqual(["request"]);
    expect(
      fieldErrors(RecordOutcomeInputSchema, { attempt_id: "e.1", outcome: "unknown", evidence: nested(32) }),
    ).toEqual([]);
  });

  it("bounds an inbound event's payload", () => {
    const event = { event_id: "ev-1", source: "crm", type: "note", payload: nested(40) };
    expect(fieldErrors(InboundEventSchema, event)).toEqual([
      { field: "payload", message: "nests deeper than 32 levels" },
    ]);
  });
});
