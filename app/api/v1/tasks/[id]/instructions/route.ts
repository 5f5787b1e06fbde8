import { readApiJson } from "@/lib/adapters/api/context";
import { instructionLedgerResource, recordInstructionResultResource } from "@/lib/adapters/api/instruction-resources";
import { requireApiOrSessionPrincipal } from "@/lib/adapters/api/session-or-bearer";
import { actorOf } from "@/lib/model/permissions";
import { dbFor } from "@/lib/db/client";
import { getInstructionLedger, recordInstruction } from "@/lib/stores/instructions";
import { requireTaskReach } from "@/lib/use-cases/authority/require-task-reach";
import { isPlainObject } from "@/lib/adapters/http/body";
import { validationError } from "@/lib/adapters/http/problem";
import { etagOf } from "@/lib/adapters/http/preconditions";
import { json, otherMethods, withProblems } from "@/lib/adapters/http/respond";

export const dynamic = "force-dynamic";

type Context = { params: Promise<{ id: string }> };

/** The task's instruction ledger, newest first, each entry with its standing; ETag is the ledger's seq. */
export const GET = withProblems(async (request, { params }: Context) => {
  const principal = await requireApiOrSessionPrincipal(request, "instructions:read");
  const { id } = await params;
  const db = dbFor(principal);
  await requireTaskReach(db, principal, id);
  const ledger = await getInstructionLedger(db, id);
  return json(instructionLedgerResource(ledger), { headers: { ETag: etagOf(ledger.seq) } });
});

/**
 * Appends an instruction. The ledger seq you read comes from If-Match (the
 * GET's ETag, `"0"` for an empty ledger) or the body's expected_seq; a stale
 * one is 409 with the current seq. A retried instruction_id returns the first
 * result (200, Idempotent-Replayed).
 */
export const POST = withProblems(async (request, { params }: Context) => {
  const principal = await requireApiOrSessionPrincipal(request, "instructions:write");
  const { id } = await params;
  const body = withExpectedSeq(await readApiJson(request), request.headers.get("if-match"));
  const db = dbFor(principal);
  await requireTaskReach(db, principal, id, { drive: true });
  const result = await recordInstruction(db, id, body, actorOf(principal));
  const headers: Record<string, string> = { ETag: etagOf(result.instruction.seq) };
  if (result.replayed) headers["Idempotent-Replayed"] = "true";
  return json(recordInstructionResultResource(result), { status: result.replayed ? 200 : 201, headers });
});

/** If-Match → expected_seq, the way the task routes fill expected_version; both sent and different is refused. */
function withExpectedSeq(body: unknown, header: string | null): unknown {
  if (header === null || header.trim() === "") return body;
  const m = /^(?:W\/)?"(\d{1,9})"$/.exec(header.trim()) ?? /^(\d{1,9})$/.exec(header.trim());
  if (!m?.[1])
    throw validationError([
      {
        field: "If-Match",
        message: 'must be the ledger seq you read as an ETag, e.g. If-Match: "3" ("0" for an empty ledger)',
      },
    ]);
  const seq = Number(m[1]);
  if (!isPlainObject(body)) return body;
  if (body.expected_seq === undefined) return { ...body, expected_seq: seq };
  if (typeof body.expected_seq === "number" && body.expected_seq !== seq) {
    throw validationError([
      {
        field: "expected_seq",
        message: `is ${body.expected_seq} but If-Match says ${seq}; send one, or the same in both`,
      },
    ]);
  }
  return body;
}

export const { PUT, PATCH, DELETE } = otherMethods(["GET", "POST"]);
