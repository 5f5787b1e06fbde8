import {
  edgePathData,
  type GraphEdge,
  type GraphLayout,
  type GraphNode,
} from "@/lib/adapters/console/tasks/workflow-graph";

export interface GraphHighlight {
  current?: string;
  /** Edge keys out of the current state that can be taken now. */
  allowed?: ReadonlySet<string>;
  /** Edge keys out of the current state that exist but are blocked now. */
  blocked?: ReadonlySet<string>;
  /** Edge keys and states the task has been through. */
  pathEdges?: ReadonlySet<string>;
  pathStates?: ReadonlySet<string>;
}

type EdgeRole = "plain" | "path" | "blocked" | "next";

function edgeRole(edge: GraphEdge, h: GraphHighlight): EdgeRole | null {
  if (h.allowed?.has(edge.key)) return "next";
  if (h.blocked?.has(edge.key)) return "blocked";
  if (h.pathEdges?.has(edge.key)) return "path";
  // Fan-in edges (cancel from everywhere) would bury the graph: drawn only when they matter.
  return edge.fromAnyActive ? null : "plain";
}

function nodeClass(node: GraphNode, h: GraphHighlight): string {
  const classes = ["graph-node"];
  if (node.terminal) classes.push(node.success ? "graph-node--success" : "graph-node--terminal");
  if (h.pathStates?.has(node.id)) classes.push("graph-node--visited");
  if (h.current === node.id) classes.push("graph-node--current");
  return classes.join(" ");
}

/**
 * A workflow's state machine as SVG (server-rendered, no script). The title
 * and description name what is shown; the text list beside the graph carries
 * the same facts for screen readers and for copying.
 */
export function WorkflowGraph({
  layout,
  idPrefix,
  title,
  description,
  highlight = {},
}: {
  layout: GraphLayout;
  idPrefix: string;
  title: string;
  description: string;
  highlight?: GraphHighlight;
}) {
  const order: EdgeRole[] = ["plain", "path", "blocked", "next"];
  const edges = layout.edges
    .map((edge) => ({ edge, role: edgeRole(edge, highlight) }))
    .filter((e): e is { edge: GraphEdge; role: EdgeRole } => e.role !== null)
    .sort((a, b) => order.indexOf(a.role) - order.indexOf(b.role));
  const marker = (role: EdgeRole) => `${idPrefix}-arrow-${role}`;
  return (
    <svg
      className="graph"
      viewBox={`0 0 ${layout.width} ${layout.height}`}
      width={layout.width}
      height={layout.height}
      role="img"
      aria-labelledby={`${idPrefix}-title ${idPrefix}-desc`}
    >
      <title id={`${idPrefix}-title`}>{title}</title>
      <desc id={`${idPrefix}-desc`}>{description}</desc>
      <defs>
        {order.map((role) => (
          <marker
            key={role}
            id={marker(role)}
            className={`graph-arrow graph-arrow--${role}`}
            viewBox="0 0 10 10"
            refX="9"
            refY="5"
            markerWidth="7"
            markerHeight="7"
            orient="auto-start-reverse"
          >
            <path d="M0,0 L10,5 L0,10 z" />
          </marker>
        ))}
      </defs>
      <g className="graph-edges">
        {edges.map(({ edge, role }) => (
          <path
            key={edge.key}
            className={`graph-edge graph-edge--${role}`}
            d={edgePathData(edge.points)}
            markerEnd={`url(#${marker(role)})`}
          >
            <title>{`${edge.from} → ${edge.to}: ${edge.description} (by ${edge.by.join(", ")})`}</title>
          </path>
        ))}
      </g>
      <g className="graph-nodes">
        {layout.nodes.map((node) => {
          const left = node.x - node.width / 2;
          const top = node.y - node.height / 2;
          return (
            <g key={node.id} className={nodeClass(node, highlight)}>
              <title>{`${node.id}: ${node.description}${node.terminal ? " (terminal)" : ""}${highlight.current === node.id ? " (current state)" : ""}`}</title>
              {node.initial ? <circle className="graph-start" cx={node.x} cy={top - 9} r={4} /> : null}
              <rect x={left} y={top} width={node.width} height={node.height} rx={node.terminal ? node.height / 2 : 7} />
              {node.terminal ? (
                <rect
                  className="graph-node__inner"
                  x={left + 3}
                  y={top + 3}
                  width={node.width - 6}
                  height={node.height - 6}
                  rx={(node.height - 6) / 2}
                />
              ) : null}
              <text x={node.x} y={node.y} dominantBaseline="central" textAnchor="middle">
                {node.id}
              </text>
              {node.fromAnyActive ? (
                <text className="graph-node__note" x={node.x} y={top + node.height + 11} textAnchor="middle">
                  from any active state
                </text>
              ) : null}
            </g>
          );
        })}
      </g>
    </svg>
  );
}

export function GraphLegend({ showTaskMarks }: { showTaskMarks: boolean }) {
  return (
    <ul className="graph-legend" aria-label="Legend">
      {showTaskMarks ? (
        <>
          <li>
            <span className="swatch swatch--current" aria-hidden="true" /> current state
          </li>
          <li>
            <span className="swatch swatch--path" aria-hidden="true" /> path taken
          </li>
          <li>
            <span className="swatch swatch--next" aria-hidden="true" /> possible next step
          </li>
          <li>
            <span className="swatch swatch--blocked" aria-hidden="true" /> blocked next step
          </li>
        </>
      ) : null}
      <li>
        <span className="swatch swatch--terminal" aria-hidden="true" /> terminal state
      </li>
      <li>
        <span className="swatch swatch--start" aria-hidden="true" /> initial state
      </li>
    </ul>
  );
}
