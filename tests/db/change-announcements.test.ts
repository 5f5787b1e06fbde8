import { describe } from "vitest";
import { describeChangeAnnouncements } from "@/tests/helpers/change-announcements-suite";
import { openTestPglite } from "@/tests/helpers/pglite";

/** The embedded database's change announcements: PGlite's one session listens (lib/db/notifications.ts). */
describe("change announcements on the embedded database", () => {
  describeChangeAnnouncements(() => openTestPglite());
});
