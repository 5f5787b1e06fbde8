import { createHmac, timingSafeEqual } from "node:crypto";

/**
 * The provider's webhook signature, like Stripe's:
 * `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`. The sandbox signs
 * with it and Verity's receiver verifies with it.
 */
export function signWebhook(secret: string, body: string, timestampSeconds: number): string {
  const mac = createHmac("sha256", secret).update(`${timestampSeconds}.${body}`).digest("hex");
  return `t=${timestampSeconds},v1=${mac}`;
}

/**
 * For a receiver: is `header` a valid signature of the exact `body` bytes,
 * made within `toleranceSeconds` (replayed old deliveries are refused)?
 */
export function verifyWebhookSignature(input: {
  secret: string;
  header: string | null;
  body: string;
  toleranceSeconds?: number;
  nowSeconds?: number;
}): boolean {
  if (!input.header) return false;
  const parts = new Map(input.header.split(",").map((p) => p.trim().split("=", 2) as [string, string | undefined]));
  const t = Number(parts.get("t"));
  const given = parts.get("v1");
  if (!Number.isInteger(t) || !given || !/^[0-9a-f]{64}$/.test(given)) return false;
  const now = input.nowSeconds ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - t) > (input.toleranceSeconds ?? 300)) return false;
  const expected = createHmac("sha256", input.secret).update(`${t}.${input.body}`).digest();
  return timingSafeEqual(expected, Buffer.from(given, "hex"));
}
