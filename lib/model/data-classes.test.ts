import { describe, expect, it } from "vitest";
import {
  MASKED_VALUE,
  classOfPointer,
  classesIn,
  dataClassProblems,
  higherClass,
  maskRestricted,
  payloadClassifier,
  taskStateClassifier,
} from "@/lib/model/data-classes";
import { builtInToolDataClasses } from "@/lib/model/tools/built-in-tools";

describe("classOfPointer", () => {
  it("gives the task state's defaults: free text confidential, gates, status and budget internal", () => {
    const classify = taskStateClassifier(undefined);
    expect(classOfPointer(classify, "/artifacts/test_results")).toBe("confidential");
    expect(classOfPointer(classify, "/subtasks/3/title")).toBe("confidential");
    expect(classOfPointer(classify, "/subtasks/3/status")).toBe("internal");
    expect(classOfPointer(classify, "/gates/plan_approved")).toBe("internal");
    expect(classOfPointer(classify, "/budget/currency_spent_usd")).toBe("internal");
    expect(classOfPointer(classify, "/active_agents/0")).toBe("internal");
  });

  it("lets the deepest declaration win, a workflow's over a default at the same pointer", () => {
    const classify = taskStateClassifier({ "/artifacts/review_report": "restricted", "/artifacts": "internal" });
    expect(classOfPointer(classify, "/artifacts/review_report")).toBe("restricted");
    expect(classOfPointer(classify, "/artifacts/test_results")).toBe("internal");
  });

  it("makes an undeclared provider payload field confidential", () => {
    const classify = payloadClassifier({ "/amount_cents": "internal" });
    expect(classOfPointer(classify, "/amount_cents")).toBe("internal");
    expect(classOfPointer(classify, "/anything/else")).toBe("confidential");
  });
});

describe("maskRestricted", () => {
  const refund = builtInToolDataClasses["payments.refund"];

  it("masks a refund request's customer and nothing else, naming the pointer under its prefix", () => {
    const request = { amount_cents: 500, currency: "usd", charge_id: "ch_1", customer_id: "cus_secret" };
    const { value, masked } = maskRestricted(request, payloadClassifier(refund.request), "/request");
    expect(value).toEqual({ amount_cents: 500, currency: "usd", charge_id: "ch_1", customer_id: MASKED_VALUE });
    expect(masked).toEqual(["/request/customer_id"]);
    expect(request.customer_id).toBe("cus_secret");
  });

  it("masks a whole subtree at its highest restricted pointer, through wildcards and arrays", () => {
    const classify = payloadClassifier({ "/people/*/contact": "restricted" });
    const { value, masked } = maskRestricted(
      { people: [{ name: "a", contact: { email: "a@x" } }, { name: "b" }] },
      classify,
    );
    expect(value).toEqual({ people: [{ name: "a", contact: MASKED_VALUE }, { name: "b" }] });
    expect(masked).toEqual(["/people/0/contact"]);
  });

  it("leaves null and scalars alone: only a declared field is masked, never the document", () => {
    const classify = payloadClassifier({ "/a": "restricted" });
    expect(maskRestricted(null, classify)).toEqual({ value: null, masked: [] });
    expect(maskRestricted("text", classify)).toEqual({ value: "text", masked: [] });
  });

  it("escapes pointer tokens it reports", () => {
    const { masked } = maskRestricted({ "a/b": 1 }, payloadClassifier({ "/a~1b": "restricted" }));
    expect(masked).toEqual(["/a~1b"]);
  });
});

describe("classesIn", () => {
  it("lists the classes of the leaves present, least to most sensitive, each once", () => {
    const classify = payloadClassifier(builtInToolDataClasses["payments.refund"].request);
    expect(classesIn({ amount_cents: 1, currency: "usd" }, classify)).toEqual(["internal"]);
    expect(classesIn({ amount_cents: 1, customer_id: "c", note: "x" }, classify)).toEqual([
      "internal",
      "confidential",
      "restricted",
    ]);
  });
});

describe("dataClassProblems", () => {
  it("names a malformed pointer and an unknown class at their keys", () => {
    expect(
      dataClassProblems({ customer_id: "restricted", "/x": "secret", "/y~2": "public" }, "$.data_classes"),
    ).toEqual([
      expect.objectContaining({ path: '$.data_classes["customer_id"]', kind: "invalid_pointer" }),
      expect.objectContaining({
        path: '$.data_classes["/x"]',
        kind: "unknown_class",
        message: '"secret" is not a data class. The classes are public, internal, confidential, restricted.',
      }),
      expect.objectContaining({ path: '$.data_classes["/y~2"]', kind: "invalid_pointer" }),
    ]);
    expect(dataClassProblems(["/x"], "$.data_classes")).toEqual([
      expect.objectContaining({ path: "$.data_classes", kind: "not_a_map" }),
    ]);
    expect(dataClassProblems({ "/a/*/b": "public" }, "$")).toEqual([]);
  });

  it("orders classes", () => {
    expect(higherClass("internal", "restricted")).toBe("restricted");
    expect(higherClass("confidential", "public")).toBe("confidential");
  });
});
