import { describe, expect, it } from "vitest";
import { actorFilterOf, actorMatches } from "@/lib/model/audit/actor-filter";

const reconciler = "spiffe://verity.local/system/reconciler";

describe("actor filters people type", () => {
  it("matches the full SPIFFE id exactly, and only it", () => {
    const filter = actorFilterOf(` ${reconciler} `);
    expect(filter).toEqual({ kind: "exact", actor: reconciler });
    expect(actorMatches(filter, reconciler)).toBe(true);
    expect(actorMatches(filter, `${reconciler}-2`)).toBe(false);
  });

  it("matches the short form the console shows and any part of it, whatever the case", () => {
    for (const typed of ["system/reconciler", "reconciler", "Reconciler", "system/"]) {
      expect(actorMatches(actorFilterOf(typed), reconciler)).toBe(true);
    }
    expect(actorMatches(actorFilterOf("agent/"), reconciler)).toBe(false);
  });

  it("makes LIKE's wildcards literal in the SQL pattern", () => {
    expect(actorFilterOf("a%b_c\\")).toEqual({ kind: "contains", pattern: "%a\\%b\\_c\\\\%", text: "a%b_c\\" });
  });
});
