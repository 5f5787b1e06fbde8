import Link from "next/link";
import type { WorkflowMigrationPage } from "@/lib/adapters/console/workflows/workflow-pages";
import {
  workflowCompareHref,
  workflowMigrateHref,
  workflowVersionHref,
} from "@/lib/adapters/console/workflows/workflow-href";
import { pluralize } from "@/lib/adapters/console/shared/format";
import { EmptyState } from "@/components/empty-state";
import { MigrationPanel } from "@/components/workflows/migration-panel";
import { WorkflowBreadcrumb } from "@/components/workflows/workflow-version-view";
import "@/components/workflows/workflows.css";

/** /workflows/[name]/migrate: the engineer's move of running tasks from one version to a newer one. */
export function WorkflowMigrationView({ name, versions, pair, chosen, problem }: WorkflowMigrationPage) {
  return (
    <div className="wf-page">
      <header className="page-header">
        <WorkflowBreadcrumb name={name} here={{ href: workflowMigrateHref(name), label: "move tasks" }} />
        <h1>
          Move {name} tasks{pair ? ` from v${pair.from.version} to v${pair.to.version}` : " to a newer version"}
        </h1>
        <p className="lede">
          A task keeps the version it was created with until it is moved here. Each move is planned first (a dry run
          that changes nothing), then applied task by task as a versioned transition with your reason, checked against
          the newer version&apos;s rules for the state the task lands in, and recorded in the audit log.
        </p>
      </header>
      {versions.length < 2 ? (
        <EmptyState title="Nowhere to move tasks yet">
          <p>{problem}</p>
          <p>
            <Link href="/workflows">Back to the workflows</Link>
          </p>
        </EmptyState>
      ) : (
        <>
          <form className="filters" method="get" aria-label="Versions to move between">
            <div className="field">
              <label htmlFor="migrate-from">Tasks on</label>
              <select
                id="migrate-from"
                name="from"
                defaultValue={chosen.from === null ? undefined : String(chosen.from)}
              >
                {versions.map((v) => (
                  <option key={v.version} value={v.version}>
                    v{v.version} ({pluralize(v.taskCount, "task")})
                  </option>
                ))}
              </select>
            </div>
            <div className="field">
              <label htmlFor="migrate-to">Move to</label>
              <select id="migrate-to" name="to" defaultValue={chosen.to === null ? undefined : String(chosen.to)}>
                {versions.map((v) => (
                  <option key={v.version} value={v.version}>
                    v{v.version}
                    {v.current ? " (current)" : ""}
                  </option>
                ))}
              </select>
            </div>
            <button type="submit" className="button">
              Choose
            </button>
          </form>
          {problem ? (
            <div className="notice notice--error" role="alert">
              {problem}
            </div>
          ) : null}
          {pair ? (
            <>
              <p className="hint">
                <Link href={workflowVersionHref(name, pair.from.version)}>v{pair.from.version}</Link> has{" "}
                {pluralize(pair.from.taskCount, "task")} in any state.{" "}
                <Link href={workflowCompareHref(name, pair.from.version, pair.to.version)}>
                  See what v{pair.to.version} changes
                </Link>
                .
              </p>
              <MigrationPanel
                key={`${pair.from.version}->${pair.to.version}`}
                name={name}
                fromVersion={pair.from.version}
                toVersion={pair.to.version}
                fromStates={pair.fromStates}
                toStates={pair.toStates}
                initialMapping={pair.initialMapping}
              />
            </>
          ) : null}
        </>
      )}
    </div>
  );
}
