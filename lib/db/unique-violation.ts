import pg from "pg";
import { Prisma } from "@/lib/generated/prisma/client";

/**
 * Whether a write failed on a unique key, in each form the same violation
 * reaches us: P2002 from Prisma's query builder, P2010 wrapping the driver's
 * error for raw SQL (the CAS statements, PGlite and node-postgres alike),
 * and 23505 straight from node-postgres on the direct path
 * (lib/db/client.ts directQuery). The natural keys (transition id, tool call,
 * instruction id, one decision per person) turn a twin request into
 * "already applied" through this check, so missing a form means a 500
 * instead of a replay.
 */
export function isUniqueViolation(error: unknown): boolean {
  if (error instanceof pg.DatabaseError) return error.code === "23505";
  if (!(error instanceof Prisma.PrismaClientKnownRequestError)) return false;
  if (error.code === "P2002") return true;
  const cause = (error.meta?.driverAdapterError as { cause?: { kind?: string; originalCode?: string } } | undefined)
    ?.cause;
  return error.code === "P2010" && (cause?.kind === "UniqueConstraintViolation" || cause?.originalCode === "23505");
}
