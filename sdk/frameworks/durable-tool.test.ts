import { describe, expect, it } from "vitest";
import { clientIdSchema } from "@/lib/core/validation";
import { verityToolCallId } from "./durable-tool";

describe("verityToolCallId", () => {
  it("keeps a framework's call id readable when the ledger accepts it as it is", async () => {
    expect(await verityToolCallId("refund", "call_8xY2-b.c")).toBe("refund:call_8xY2-b.c");
  });

  it("hashes what the ledger would refuse (other characters, too long), the same in every process", async () => {
    for (const id of ["toolu_01/abc def", "x".repeat(200), "über"]) {
      const key = await verityToolCallId("refund", id);
      expect(clientIdSchema.safeParse(key).success).toBe(true);
      expect(key).toMatch(/^refund:sha256:[0-9a-f]{64}$/);
      expect(await verityToolCallId("refund", id)).toBe(key);
    }
    expect(await verityToolCallId("refund", "a b")).not.toBe(await verityToolCallId("refund", "a c"));
    expect(await verityToolCallId("_weird name!", "a b")).toMatch(/^t_weird_name_:sha256:/);
  });
});
