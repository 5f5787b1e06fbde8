import { describe, expect, it } from "vitest";
import {
  gatesAwaiting,
  inboxHref,
  inboxKindsFor,
  isInboxItemKey,
  parseInboxQuery,
  selectInboxItems,
  type InboxItem,
} from "@/lib/model/inbox/inbox-items";
import { agentTaskV2 } from "@/lib/model/workflows/agent-task";
import { deliveryV1, deliveryV2 } from "@/lib/model/workflows/delivery";

function item(over: Partial<InboxItem> & Pick<InboxItem, "key" | "kind">): InboxItem {
  return {
    what: over.key,
    why: "",
    href: "/",
    taskId: null,
    executionId: null,
    amountMinor: null,
    currency: null,
    since: new Date("2026-12-01T00:00:00Z"),
    claim: { claimedBy: null, claimedAt: null, version: 0 },
    ...over,
  };
}

const me = "spiffe://verity.local/user/me";
const items: InboxItem[] = [
  item({ key: "alert:a1", kind: "alert", since: new Date("2026-12-01T01:00:00Z") }),
  item({
    key: "review:r1",
    kind: "review",
    amountMinor: 75_000,
    currency: "usd",
    since: new Date("2026-12-01T03:00:00Z"),
    claim: { claimedBy: me, claimedAt: new Date(), version: 1 },
  }),
  item({
    key: "review:r2",
    kind: "review",
    amountMinor: 2_500,
    currency: "usd",
    since: new Date("2026-12-01T02:00:00Z"),
  }),
  item({
    key: "task:t1",
    kind: "escalated_task",
    since: new Date("2026-12-01T00:30:00Z"),
    claim: { claimedBy: "spiffe://verity.local/user/other", claimedAt: new Date(), version: 3 },
  }),
  item({ key: "gate:t2:security_approved", kind: "gate", since: new Date("2026-12-01T04:00:00Z") }),
];
const keys = (list: InboxItem[]) => list.map((i) => i.key);

describe("the inbox's list", () => {
  it("sorts oldest first by default, by kind in the inbox's order, or by the largest amount (none last)", () => {
    expect(keys(selectInboxItems(items, parseInboxQuery({}), me))).toEqual([
      "task:t1",
      "alert:a1",
      "review:r2",
      "review:r1",
      "gate:t2:security_approved",
    ]);
    expect(keys(selectInboxItems(items, parseInboxQuery({ sort: "kind" }), me))).toEqual([
      "review:r2",
      "review:r1",
      "task:t1",
      "gate:t2:security_approved",
      "alert:a1",
    ]);
    expect(keys(selectInboxItems(items, parseInboxQuery({ sort: "amount" }), me)).slice(0, 2)).toEqual([
      "review:r1",
      "review:r2",
    ]);
  });

  it("filters by kind and by claim: mine is what the viewer claimed, unclaimed what nobody did", () => {
    expect(keys(selectInboxItems(items, parseInboxQuery({ kind: "review" }), me))).toEqual(["review:r2", "review:r1"]);
    expect(keys(selectInboxItems(items, parseInboxQuery({ claimed: "mine" }), me))).toEqual(["review:r1"]);
    expect(keys(selectInboxItems(items, parseInboxQuery({ claimed: "unclaimed" }), me))).toEqual([
      "alert:a1",
      "review:r2",
      "gate:t2:security_approved",
    ]);
  });

  it("keeps the query in the URL with empty and default fields left out, and reads anything unknown as the default", () => {
    expect(inboxHref({ kind: null, claimed: null, sort: "age" })).toBe("/inbox");
    expect(inboxHref({ kind: "gate", claimed: "mine", sort: "amount" })).toBe(
      "/inbox?kind=gate&claimed=mine&sort=amount",
    );
    expect(parseInboxQuery({ kind: "nonsense", claimed: ["MINE"], sort: "" })).toEqual({
      kind: null,
      claimed: "mine",
      sort: "age",
    });
    const query = parseInboxQuery({ kind: "alert", sort: "kind" });
    expect(parseInboxQuery(Object.fromEntries(new URL(inboxHref(query), "http://x").searchParams))).toEqual(query);
  });

  it("accepts only the four shapes of item key", () => {
    for (const key of ["review:rev_1", "task:t_1", "task:a:b", "alert:al_1", "gate:t_1:security_approved"])
      expect(isInboxItemKey(key), key).toBe(true);
    for (const key of ["", "review:", "gate:t_1", "user:alice", "review:a b", "gate:t:Bad-Gate", "gate::plan_approved"])
      expect(isInboxItemKey(key), key).toBe(false);
  });
});

describe("who acts on what", () => {
  it("gives each role the kinds it may act on: an auditor none, an engineer gates and alerts", () => {
    expect(inboxKindsFor({ role: "operator", kind: "user" })).toEqual(["review", "escalated_task", "gate", "alert"]);
    expect(inboxKindsFor({ role: "engineer", kind: "user" })).toEqual(["gate", "alert"]);
    expect(inboxKindsFor({ role: "auditor", kind: "user" })).toEqual([]);
  });

  it("waits on the human gates a way forward needs, for the roles that set them, until they are set", () => {
    expect(gatesAwaiting(deliveryV2, "testing", { tests_passing: true }, null)).toEqual([
      "security_approved",
      "deployment_approved",
    ]);
    expect(gatesAwaiting(deliveryV2, "testing", {}, "engineer")).toEqual(["security_approved"]);
    expect(gatesAwaiting(deliveryV2, "testing", {}, "operator")).toEqual(["deployment_approved"]);
    expect(gatesAwaiting(deliveryV2, "testing", { security_approved: true }, "admin")).toEqual(["deployment_approved"]);
    // Earlier stages need only the agent's own gates; a finished task waits for nothing.
    expect(gatesAwaiting(deliveryV2, "planning", {}, null)).toEqual([]);
    expect(gatesAwaiting(deliveryV2, "complete", {}, null)).toEqual([]);
    // A shipped v1 task takes the newest shipped rules (gateRulesOf); a workflow with no gates has none.
    expect(gatesAwaiting(deliveryV1, "testing", {}, "engineer")).toEqual(["security_approved"]);
    expect(gatesAwaiting(agentTaskV2, "RUNNING", {}, null)).toEqual([]);
  });
});
