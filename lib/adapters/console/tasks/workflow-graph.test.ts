import { describe, expect, it } from "vitest";
import { agentTaskV1 } from "@/lib/model/workflows/agent-task";
import { deliveryV1 } from "@/lib/model/workflows/delivery";
import { edgeKey, edgePathData, layoutWorkflowGraph } from "@/lib/adapters/console/tasks/workflow-graph";

describe("layoutWorkflowGraph", () => {
  it.each([agentTaskV1, deliveryV1])("places every state and routes every edge of $name inside the drawing", (def) => {
    const layout = layoutWorkflowGraph(def);
    expect(layout.nodes.map((n) => n.id).sort()).toEqual(Object.keys(def.states).sort());
    expect(layout.edges.map((e) => e.key).sort()).toEqual(def.edges.map((e) => edgeKey(e.from, e.to)).sort());
    for (const n of layout.nodes) {
      expect(n.x - n.width / 2).toBeGreaterThanOrEqual(0);
      expect(n.x + n.width / 2).toBeLessThanOrEqual(layout.width);
      expect(n.y - n.height / 2).toBeGreaterThanOrEqual(0);
      expect(n.y + n.height / 2).toBeLessThanOrEqual(layout.height);
    }
    for (const e of layout.edges) {
      expect(e.points.length).toBeGreaterThanOrEqual(2);
      for (const p of e.points) {
        expect(p.x).toBeGreaterThanOrEqual(0);
        expect(p.x).toBeLessThanOrEqual(layout.width);
      }
    }
  });

  it("boxes never overlap", () => {
    const { nodes } = layoutWorkflowGraph(agentTaskV1);
    for (const a of nodes) {
      for (const b of nodes) {
        if (a === b) continue;
        const apart =
          Math.abs(a.x - b.x) >= (a.width + b.width) / 2 || Math.abs(a.y - b.y) >= (a.height + b.height) / 2;
        expect(apart, `${a.id} overlaps ${b.id}`).toBe(true);
      }
    }
  });

  it("marks the initial state, terminal states and the targets reachable from any active state", () => {
    const { nodes, edges } = layoutWorkflowGraph(deliveryV1);
    const byId = new Map(nodes.map((n) => [n.id, n]));
    expect(byId.get("planning")?.initial).toBe(true);
    expect(byId.get("complete")).toMatchObject({ terminal: true, success: true, fromAnyActive: false });
    expect(byId.get("cancelled")).toMatchObject({ terminal: true, success: false, fromAnyActive: true });
    expect(edges.find((e) => e.key === "testing->cancelled")?.fromAnyActive).toBe(true);
    expect(edges.find((e) => e.key === "testing->complete")?.fromAnyActive).toBe(false);
  });

  it("puts the terminal states below the initial one", () => {
    const { nodes } = layoutWorkflowGraph(agentTaskV1);
    const y = (id: string) => nodes.find((n) => n.id === id)!.y;
    expect(y("COMPLETED")).toBeGreaterThan(y("RECEIVED"));
    expect(y("CANCELLED")).toBeGreaterThan(y("RUNNING"));
  });

  it("is computed once per definition", () => {
    expect(layoutWorkflowGraph(agentTaskV1)).toBe(layoutWorkflowGraph(agentTaskV1));
  });
});

describe("edgePathData", () => {
  it("draws a straight segment for two points and rounds bends for more", () => {
    expect(edgePathData([])).toBe("");
    expect(
      edgePathData([
        { x: 0, y: 0 },
        { x: 10, y: 20 },
      ]),
    ).toBe("M0,0 L10,20");
    expect(
      edgePathData([
        { x: 0, y: 0 },
        { x: 10, y: 10 },
        { x: 20, y: 0 },
      ]),
    ).toBe("M0,0 Q10,10 15,5 L20,0");
  });
});
