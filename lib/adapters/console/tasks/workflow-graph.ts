import dagre from "@dagrejs/dagre";
import type { ActorKind, Guard, WorkflowDefinition } from "@/lib/model/workflows/workflow-definition";

export interface GraphPoint {
  x: number;
  y: number;
}

export interface GraphNode {
  id: string;
  description: string;
  x: number;
  y: number;
  width: number;
  height: number;
  initial: boolean;
  terminal: boolean;
  success: boolean;
  /** Reachable from every non-terminal state (e.g. a cancel): its many in-edges are drawn only when they matter. */
  fromAnyActive: boolean;
}

export interface GraphEdge {
  /** `from->to`: a definition has at most one edge per pair. */
  key: string;
  from: string;
  to: string;
  by: ActorKind[];
  guards: Guard[];
  description: string;
  /** Expanded from `fromAnyNonTerminal`. */
  fromAnyActive: boolean;
  points: GraphPoint[];
}

export interface GraphLayout {
  width: number;
  height: number;
  nodes: GraphNode[];
  edges: GraphEdge[];
}

export const edgeKey = (from: string, to: string): string => `${from}->${to}`;

const nodeHeight = 38;
const margin = 20;

/** A box wide enough for the label in the graph's 12.5px monospace label font (about 7.6px a character). */
function nodeWidth(label: string): number {
  return Math.max(100, Math.ceil(label.length * 8.2) + 30);
}

const cache = new Map<string, GraphLayout>();

/**
 * Lays a workflow's state machine out top to bottom with dagre: a pure
 * function of the definition, cached by digest, so every task of one
 * workflow version shows its states in the same places.
 *
 * The "from any active state" edges (cancel, fail, expire) take part in the
 * layout with weight 0, which ranks their targets at the bottom without
 * pulling the main flow about; the renderer decides which of them to draw.
 */
export function layoutWorkflowGraph(def: WorkflowDefinition): GraphLayout {
  const cached = cache.get(def.digest);
  if (cached) return cached;

  const fanInTargets = new Set((def.fromAnyNonTerminal ?? []).map((t) => t.to));
  const explicit = new Set(def.transitions.map((t) => edgeKey(t.from, t.to)));
  const g = new dagre.graphlib.Graph();
  g.setGraph({ rankdir: "TB", nodesep: 28, ranksep: 44, edgesep: 14, marginx: 0, marginy: 0 });
  g.setDefaultEdgeLabel(() => ({}));
  for (const name of Object.keys(def.states)) g.setNode(name, { width: nodeWidth(name), height: nodeHeight });
  for (const e of def.edges)
    g.setEdge(e.from, e.to, { weight: explicit.has(edgeKey(e.from, e.to)) ? 1 : 0, minlen: 1 });
  dagre.layout(g);

  const rawNodes = Object.entries(def.states).map(([id, s]) => {
    const n = g.node(id) as { x: number; y: number; width: number; height: number };
    return { id, s, n };
  });
  const rawEdges = def.edges.map((e) => ({
    e,
    points: ((g.edge(e.from, e.to) as { points?: GraphPoint[] } | undefined)?.points ?? []).map((p) => ({ ...p })),
  }));

  // dagre's reported size ignores edge bends that swing outside the nodes; measure everything.
  const xs = [
    ...rawNodes.flatMap(({ n }) => [n.x - n.width / 2, n.x + n.width / 2]),
    ...rawEdges.flatMap(({ points }) => points.map((p) => p.x)),
  ];
  const ys = [
    ...rawNodes.flatMap(({ n }) => [n.y - n.height / 2, n.y + n.height / 2]),
    ...rawEdges.flatMap(({ points }) => points.map((p) => p.y)),
  ];
  const dx = margin - Math.min(...xs);
  const dy = margin - Math.min(...ys);

  const layout: GraphLayout = {
    width: Math.ceil(Math.max(...xs) - Math.min(...xs) + 2 * margin),
    height: Math.ceil(Math.max(...ys) - Math.min(...ys) + 2 * margin),
    nodes: rawNodes.map(({ id, s, n }) => ({
      id,
      description: s.description,
      x: n.x + dx,
      y: n.y + dy,
      width: n.width,
      height: n.height,
      initial: id === def.initial,
      terminal: s.terminal === true,
      success: s.success === true,
      fromAnyActive: fanInTargets.has(id),
    })),
    edges: rawEdges.map(({ e, points }) => ({
      key: edgeKey(e.from, e.to),
      from: e.from,
      to: e.to,
      by: e.by,
      guards: e.guards ?? [],
      description: e.description,
      fromAnyActive: !explicit.has(edgeKey(e.from, e.to)),
      points: points.map((p) => ({ x: p.x + dx, y: p.y + dy })),
    })),
  };
  cache.set(def.digest, layout);
  return layout;
}

/** An SVG path through dagre's bend points, rounded at each bend (quadratic curves through the midpoints). */
export function edgePathData(points: GraphPoint[]): string {
  const [start, ...rest] = points;
  if (!start) return "";
  const round = (n: number) => Math.round(n * 10) / 10;
  let d = `M${round(start.x)},${round(start.y)}`;
  for (let i = 0; i < rest.length - 1; i++) {
    const p = rest[i]!;
    const q = rest[i + 1]!;
    d += ` Q${round(p.x)},${round(p.y)} ${round((p.x + q.x) / 2)},${round((p.y + q.y) / 2)}`;
  }
  const end = rest[rest.length - 1];
  if (end) d += ` L${round(end.x)},${round(end.y)}`;
  return d;
}
