import Link from "next/link";
import type { WorkflowSummary, WorkflowVersionSummary } from "@/lib/adapters/console/workflows/workflow-views";
import {
  workflowAnchor,
  workflowCompareHref,
  workflowMigrateHref,
  workflowVersionHref,
} from "@/lib/adapters/console/workflows/workflow-href";
import { taskListHref } from "@/lib/adapters/console/tasks/task-list-href";
import { pluralize, shortIdentity } from "@/lib/adapters/console/shared/format";
import { RelativeTime } from "@/components/relative-time";
import { EmptyState } from "@/components/empty-state";
import { DigestCopy } from "@/components/workflows/digest-copy";
import "@/components/workflows/workflows.css";

/** Who published a version, in words: a built-in one was registered by Verity at start. */
export function PublishedBy({ version }: { version: WorkflowVersionSummary }) {
  return version.builtIn ? (
    <>shipped with Verity</>
  ) : (
    <span className="identity" title={version.publishedBy}>
      {shortIdentity(version.publishedBy)}
    </span>
  );
}

function VersionItem({
  workflow,
  version,
  previous,
}: {
  workflow: WorkflowSummary;
  version: WorkflowVersionSummary;
  previous: WorkflowVersionSummary | undefined;
}) {
  const label = `${version.name} v${version.version}`;
  return (
    <li className={version.current ? "wf-version wf-version--current" : "wf-version"}>
      <div className="wf-version__id">
        <Link href={workflowVersionHref(version.name, version.version)} className="wf-version__link">
          v{version.version}
        </Link>
        {version.current ? (
          <span className="badge badge--success" title="New tasks are created with this version">
            current
          </span>
        ) : null}
      </div>
      <dl className="wf-version__facts">
        <div>
          <dt>{version.builtIn ? "Registered" : "Published"}</dt>
          <dd>
            <RelativeTime value={version.publishedAt} /> · <PublishedBy version={version} />
          </dd>
        </div>
        <div>
          <dt>Digest</dt>
          <dd>
            <DigestCopy digest={version.digest} label={label} />
          </dd>
        </div>
        <div>
          <dt>Tasks</dt>
          <dd>
            {version.taskCount === 0 ? (
              <span className="subtle">none</span>
            ) : (
              <Link
                href={taskListHref({ workflow: workflow.name })}
                title={`The task list filtered to ${workflow.name} (every version)`}
              >
                {pluralize(version.taskCount, "task")}
              </Link>
            )}
          </dd>
        </div>
      </dl>
      {previous ? (
        <p className="wf-version__links">
          <Link href={workflowCompareHref(version.name, previous.version, version.version)}>
            What changed since v{previous.version}
          </Link>
        </p>
      ) : null}
    </li>
  );
}

function WorkflowEntry({ workflow, canMigrate }: { workflow: WorkflowSummary; canMigrate: boolean }) {
  const headingId = `${workflowAnchor(workflow.name)}-heading`;
  const current = workflow.versions.find((v) => v.current) ?? workflow.versions[0];
  const older = workflow.versions.filter((v) => !v.current && v.taskCount > 0);
  return (
    <section id={workflowAnchor(workflow.name)} className="card wf-entry" aria-labelledby={headingId}>
      <header className="wf-entry__head">
        <h2 id={headingId}>
          {workflow.title} <span className="mono subtle">{workflow.name}</span>
        </h2>
        {current ? (
          <p className="wf-entry__current">
            New tasks get{" "}
            <Link href={workflowVersionHref(current.name, current.version)}>
              <strong>v{current.version}</strong>
            </Link>
          </p>
        ) : null}
      </header>
      <p className="wf-entry__description">{workflow.description}</p>
      <h3 className="visually-hidden">Versions</h3>
      <ol className="wf-versions" aria-label={`Versions of ${workflow.name}, newest first`}>
        {workflow.versions.map((v, i) => (
          <VersionItem key={v.digest} workflow={workflow} version={v} previous={workflow.versions[i + 1]} />
        ))}
      </ol>
      {canMigrate && current && older.length > 0 ? (
        <p className="wf-entry__migrate">
          {pluralize(
            older.reduce((n, v) => n + v.taskCount, 0),
            "task",
          )}{" "}
          on older versions.{" "}
          <Link href={workflowMigrateHref(workflow.name, older[0]?.version, current.version)}>
            Plan moving them to v{current.version}
          </Link>
        </p>
      ) : null}
    </section>
  );
}

/** /workflows: the registry, every workflow with its versions, newest first. */
export function WorkflowRegistryView({ workflows, canMigrate }: { workflows: WorkflowSummary[]; canMigrate: boolean }) {
  return (
    <div className="wf-page">
      <header className="page-header">
        <h1>Workflows</h1>
        <p className="lede">
          Each workflow is a state machine defined as data and published as numbered, immutable versions. A task is
          pinned to the digest of the version it was created with and keeps its rules when a newer one is published,
          until an engineer moves it.
        </p>
      </header>
      {workflows.length === 0 ? (
        <EmptyState title="No workflows registered">
          <p>
            Publish one with <code>npm run -s verity -- workflows publish &lt;file&gt;</code> or{" "}
            <code>POST /api/v1/workflows</code>; Verity registers its shipped workflows when it starts.
          </p>
        </EmptyState>
      ) : (
        <>
          <nav className="wf-contents" aria-label="Workflows on this page">
            <ul>
              {workflows.map((w) => (
                <li key={w.name}>
                  <a href={`#${workflowAnchor(w.name)}`}>{w.title}</a>{" "}
                  <span className="subtle">
                    ({pluralize(w.versions.length, "version")}, current v{w.versions[0]?.version})
                  </span>
                </li>
              ))}
            </ul>
          </nav>
          {workflows.map((w) => (
            <WorkflowEntry key={w.name} workflow={w} canMigrate={canMigrate} />
          ))}
        </>
      )}
    </div>
  );
}
