import { z } from "zod";
import { AppError } from "@/lib/core/errors";

/**
 * The one keyset cursor codec. A page's cursor is the sort key of its last
 * row (e.g. `[updated_at, id]`) as base64url JSON: opaque to a client, safe
 * in a URL, and the same bytes every list has always handed out, so a
 * cursor from before this module still opens its next page. Decoding checks
 * the key's shape with zod; anything else (a truncated or edited cursor, one
 * from another list) is a validation_failed naming the `cursor` field, never
 * a query run on garbage.
 */

/** The parts a sort key is made of. `instant` travels as an ISO string and comes back a Date. */
export const keysetParts = {
  instant: z.iso.datetime().transform((iso) => new Date(iso)),
  text: z.string().min(1),
  integer: z.number().int(),
};

type Parts = readonly [z.ZodType, ...z.ZodType[]];
export type KeyOf<P extends Parts> = { -readonly [I in keyof P]: z.output<P[I]> };

export interface KeysetCursor<Key> {
  encode(key: Key): string;
  /** The key, or validation_failed on the `cursor` field. */
  decode(cursor: string): Key;
}

export interface CursorRefusal {
  /** What the cursor is not, for the field error: "not a cursor returned by this API". */
  notOurs: string;
  /** What to do instead, added to the message only: "start again from the first page". */
  advice?: string;
}

export function keysetCursor<const P extends Parts>(parts: P, refusal: CursorRefusal): KeysetCursor<KeyOf<P>> {
  const schema = z.tuple(parts as unknown as [z.ZodType, ...z.ZodType[]]);
  const message = refusal.advice ? `cursor: ${refusal.notOurs}; ${refusal.advice}` : `cursor: ${refusal.notOurs}`;
  return {
    // A Date serializes as its ISO string (Date#toJSON), which `instant` reads back.
    encode: (key) => Buffer.from(JSON.stringify(key)).toString("base64url"),
    decode(cursor) {
      let raw: unknown;
      try {
        raw = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
      } catch {
        raw = undefined;
      }
      const parsed = schema.safeParse(raw);
      if (!parsed.success)
        throw new AppError("validation_failed", message, { errors: [{ field: "cursor", message: refusal.notOurs }] });
      return parsed.data as KeyOf<P>;
    },
  };
}
