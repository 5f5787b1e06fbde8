import Link from "next/link";
import type { WorkflowDefinition } from "@/lib/model/workflows/workflow-definition";
import type { WorkflowVersionSummary } from "@/lib/adapters/console/workflows/workflow-views";
import type { WorkflowStates } from "@/lib/adapters/console/workflows/workflow-states";
import {
  workflowAnchor,
  workflowCompareHref,
  workflowMigrateHref,
  workflowVersionHref,
} from "@/lib/adapters/console/workflows/workflow-href";
import { layoutWorkflowGraph } from "@/lib/adapters/console/tasks/workflow-graph";
import { taskListHref } from "@/lib/adapters/console/tasks/task-list-href";
import { pluralize } from "@/lib/adapters/console/shared/format";
import { RelativeTime } from "@/components/relative-time";
import { GraphLegend, WorkflowGraph } from "@/components/workflow/workflow-graph";
import { DigestCopy } from "@/components/workflows/digest-copy";
import { PublishedBy } from "@/components/workflows/workflow-registry-view";
import { GatesList, RejectionsList, WorkflowStatesList } from "@/components/workflows/workflow-states-list";
import "@/components/workflows/workflows.css";

export function WorkflowBreadcrumb({ name, here }: { name: string; here?: { href: string; label: string } }) {
  return (
    <nav aria-label="Breadcrumb" className="breadcrumb">
      <ol>
        <li>
          <Link href="/workflows">Workflows</Link>
        </li>
        <li>
          <Link href={`/workflows#${workflowAnchor(name)}`}>{name}</Link>
        </li>
        {here ? (
          <li>
            <Link href={here.href} aria-current="page">
              {here.label}
            </Link>
          </li>
        ) : null}
      </ol>
    </nav>
  );
}

/** /workflows/[name]/[version]: one version's graph, gates and rejections, and where it stands in the registry. */
export function WorkflowVersionView({
  summary,
  definition,
  graph,
  versions,
  canMigrate,
}: {
  summary: WorkflowVersionSummary;
  definition: WorkflowDefinition;
  graph: WorkflowStates;
  /** Every version of this workflow, newest first. */
  versions: WorkflowVersionSummary[];
  canMigrate: boolean;
}) {
  const label = `${summary.name} v${summary.version}`;
  const current = versions.find((v) => v.current);
  const previous = versions.find((v) => v.version < summary.version);
  const terminal = graph.states.filter((s) => s.terminal).map((s) => s.name);
  const graphId = `wf-${summary.name}-v${summary.version}`;
  return (
    <div className="wf-page">
      <header className="page-header">
        <WorkflowBreadcrumb
          name={summary.name}
          here={{ href: workflowVersionHref(summary.name, summary.version), label: `v${summary.version}` }}
        />
        <h1>
          {definition.title} <span className="version-pill">v{summary.version}</span>{" "}
          {summary.current ? (
            <span className="badge badge--success">current</span>
          ) : (
            <span className="badge badge--neutral">superseded</span>
          )}
        </h1>
        <p className="lede">{definition.description}</p>
        {!summary.current && current ? (
          <p className="notice notice--info">
            New tasks get <Link href={workflowVersionHref(current.name, current.version)}>v{current.version}</Link>;
            tasks created under v{summary.version} keep its rules until an engineer moves them.
          </p>
        ) : null}
        <dl className="facts facts--inline wf-facts">
          <div>
            <dt>Name</dt>
            <dd className="mono">{summary.name}</dd>
          </div>
          <div>
            <dt>{summary.builtIn ? "Registered" : "Published"}</dt>
            <dd>
              <RelativeTime value={summary.publishedAt} /> · <PublishedBy version={summary} />
            </dd>
          </div>
          <div>
            <dt>Tasks on this version</dt>
            <dd>
              {summary.taskCount === 0 ? (
                "none"
              ) : (
                <Link
                  href={taskListHref({ workflow: summary.name })}
                  title={`The task list filtered to ${summary.name}`}
                >
                  {pluralize(summary.taskCount, "task")}
                </Link>
              )}
            </dd>
          </div>
          <div className="wf-facts__digest">
            <dt>Digest</dt>
            <dd>
              <DigestCopy digest={summary.digest} label={label} full />
            </dd>
          </div>
        </dl>
        <p className="button-row wf-actions">
          {previous ? (
            <Link className="button" href={workflowCompareHref(summary.name, previous.version, summary.version)}>
              Compare with v{previous.version}
            </Link>
          ) : null}
          {!summary.current && current ? (
            <Link className="button" href={workflowCompareHref(summary.name, summary.version, current.version)}>
              Compare with current v{current.version}
            </Link>
          ) : null}
          {canMigrate && !summary.current && current && summary.taskCount > 0 ? (
            <Link className="button" href={workflowMigrateHref(summary.name, summary.version, current.version)}>
              Move its tasks to v{current.version}
            </Link>
          ) : null}
        </p>
      </header>

      <div className="wf-version-body">
        <section className="card wf-graph" aria-labelledby="states-heading">
          <h2 id="states-heading">States and transitions</h2>
          <p className="hint">
            {pluralize(graph.states.length, "state")}, starting at <span className="mono">{definition.initial}</span>;
            each lists the transitions out of it, who may take them and what must hold first.
          </p>
          <WorkflowStatesList graph={graph} label={label} />
        </section>
        <figure className="card graph-frame wf-diagram">
          <WorkflowGraph
            layout={layoutWorkflowGraph(definition)}
            idPrefix={graphId}
            title={`State machine of ${label}`}
            description={`${graph.states.length} states starting at ${definition.initial}; terminal states ${terminal.join(", ")}. Transitions from any active state are listed beside the diagram rather than drawn.`}
          />
          <figcaption>
            <GraphLegend showTaskMarks={false} />
          </figcaption>
        </figure>
      </div>

      <section className="card" aria-labelledby="gates-heading">
        <h2 id="gates-heading">Gates and who sets them</h2>
        <GatesList graph={graph} label={label} />
      </section>

      <section className="card" aria-labelledby="rejections-heading">
        <h2 id="rejections-heading">Refused on purpose</h2>
        <p className="hint">Transitions this version names as invalid, with the invariant each would break.</p>
        <RejectionsList rejections={definition.rejections} label={label} />
      </section>
    </div>
  );
}
