import { openChangeStream } from "@/lib/adapters/console/live/change-stream";
import { otherMethods, withProblems } from "@/lib/adapters/http/respond";

/** The signed-in person's live change events (Server-Sent Events; docs/live-updates.md). */
export const GET = withProblems(async (request) => openChangeStream(request.signal));

export const { POST, PUT, PATCH, DELETE } = otherMethods(["GET"]);
