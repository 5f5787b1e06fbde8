import { expect, it } from "vitest";
import { getOpenApiDocument } from "@/lib/adapters/openapi/openapi-document";

// Every schema the document names must have a JSON Schema form: a zod type without one
// (z.custom) makes the whole document fail, and /api/v1/openapi.json answers nothing useful.
it("builds, with the data classes of definitions and the masked_fields of answers", () => {
  const doc = getOpenApiDocument() as { paths: Record<string, unknown> };
  expect(doc.paths["/api/v1/checkpoints/{id}"]).toBeDefined();
  const text = JSON.stringify(doc);
  expect(text).toContain("masked_fields");
  expect(text).toContain('"restricted"');
});
