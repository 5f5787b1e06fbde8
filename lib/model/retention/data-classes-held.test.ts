import { describe, expect, it } from "vitest";
import { mostSensitive, toolDataClass, workflowDataClass } from "@/lib/model/retention/data-classes-held";

describe("the data classes a definition declares", () => {
  it("count undeclared data as confidential: no declaration, a partial one, or one that is not understood", () => {
    expect(workflowDataClass({ name: "w" })).toBe("confidential");
    expect(workflowDataClass({ data_classes: { "/order/id": "public" } })).toBe("confidential");
    expect(workflowDataClass({ data_classes: { "": "secret" } })).toBe("confidential");
    expect(workflowDataClass({ data_classes: ["public"] })).toBe("confidential");
    expect(workflowDataClass(null)).toBe("confidential");
    expect(toolDataClass({ data_classes: { request: { "": "public" } } })).toBe("confidential");
  });

  it("take a whole-document declaration at its word, and the most sensitive class anywhere", () => {
    expect(workflowDataClass({ data_classes: { "": "public" } })).toBe("public");
    expect(workflowDataClass({ data_classes: { "": "internal", "/card": "restricted" } })).toBe("restricted");
    expect(workflowDataClass({ data_classes: { "/card": "restricted" } })).toBe("restricted");
    const declared = { request: { "": "public" }, result: { "": "internal" }, evidence: { "": "public" } };
    expect(toolDataClass({ data_classes: declared })).toBe("internal");
    expect(mostSensitive([])).toBe("public");
    expect(mostSensitive(["internal", "restricted", "public"])).toBe("restricted");
  });
});

describe("the built-in tools' classes, shipped beside their definitions", () => {
  it("a refund holds a restricted customer id", () => {
    expect(toolDataClass({ name: "payments.refund", version: 1 })).toBe("restricted");
  });
});
