import { z } from "zod";

/** The answer to an inbound event or a provider webhook: received once per event id. */
export const EventReceiptSchema = z.object({
  event_id: z.string(),
  duplicate: z.boolean().meta({
    description:
      "True when this event id was received before: nothing was applied now; `result` is the first receipt's.",
  }),
  result: z.unknown().meta({ description: "What receiving the event did, as recorded the first time." }),
});
