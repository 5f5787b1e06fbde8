import { z } from "zod";
import { AppError, fieldErrorsFromZod } from "@/lib/core/errors";

/**
 * Input validation shared by every entry point: one zod parse that answers
 * a 400 naming each offending field, and the one shape of a client-chosen id.
 */

/** Parses `input` or throws validation_failed with every field error, by JSON path. */
export function parseOrThrow<S extends z.ZodType>(schema: S, input: unknown): z.infer<S> {
  const parsed = schema.safeParse(input);
  if (!parsed.success) {
    const errors = fieldErrorsFromZod(parsed.error.issues as Parameters<typeof fieldErrorsFromZod>[0]);
    throw new AppError(
      "validation_failed",
      errors.map((e) => (e.field ? `${e.field}: ${e.message}` : e.message)).join("; "),
      { errors },
    );
  }
  return parsed.data;
}

/** An id a client chooses (task, transition, tool call, lease, instruction): safe in URLs, logs and keys. */
export const clientIdSchema = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/, "must be 1-128 characters: letters, digits, . _ : -");
