import { getPlatformDb } from "@/lib/db/client";

/** Liveness and database reachability, for the e2e runner and load balancers. No data, no auth. */
export async function GET(): Promise<Response> {
  try {
    await getPlatformDb().$queryRaw`SELECT 1`;
    return Response.json({ status: "ok" });
  } catch {
    return Response.json({ status: "unavailable" }, { status: 503 });
  }
}
