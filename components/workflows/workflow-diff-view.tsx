import Link from "next/link";
import type { WorkflowVersionSummary } from "@/lib/adapters/console/workflows/workflow-views";
import type { DiffMark, DiffSection } from "@/lib/adapters/console/workflows/workflow-diff-format";
import {
  workflowCompareHref,
  workflowMigrateHref,
  workflowVersionHref,
} from "@/lib/adapters/console/workflows/workflow-href";
import { pluralize } from "@/lib/adapters/console/shared/format";
import { EmptyState } from "@/components/empty-state";
import { WorkflowBreadcrumb } from "@/components/workflows/workflow-version-view";
import "@/components/workflows/workflows.css";

const markWords: Record<DiffMark, string> = { added: "added", removed: "removed", changed: "changed" };

function VersionSelect({
  id,
  name,
  label,
  versions,
  value,
}: {
  id: string;
  name: string;
  label: string;
  versions: WorkflowVersionSummary[];
  value: number;
}) {
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <select id={id} name={name} defaultValue={String(value)}>
        {versions.map((v) => (
          <option key={v.version} value={v.version}>
            v{v.version}
            {v.current ? " (current)" : ""}
          </option>
        ))}
      </select>
    </div>
  );
}

export interface WorkflowCompare {
  from: WorkflowVersionSummary;
  to: WorkflowVersionSummary;
  sections: DiffSection[];
  count: number;
}

/** /workflows/[name]/compare: what changed between two versions, picked with a plain GET form. */
export function WorkflowDiffView({
  name,
  versions,
  compare,
  problem,
  canMigrate,
}: {
  name: string;
  /** Newest first. */
  versions: WorkflowVersionSummary[];
  /** Null when there is nothing to compare (one version) or the choice was not valid (problem says why). */
  compare: WorkflowCompare | null;
  problem: string | null;
  canMigrate: boolean;
}) {
  const fromDefault = compare?.from.version ?? versions[1]?.version ?? versions[0]?.version ?? 1;
  const toDefault = compare?.to.version ?? versions[0]?.version ?? 1;
  const title = compare ? `${name}: v${compare.from.version} → v${compare.to.version}` : `${name}: compare versions`;
  return (
    <div className="wf-page">
      <header className="page-header">
        <WorkflowBreadcrumb name={name} here={{ href: workflowCompareHref(name), label: "compare" }} />
        <h1>{title}</h1>
        <p className="lede">
          What a newer version changes, as its document declares it: states, transitions and who may take them, guards,
          who sets the gates, and the transitions refused on purpose.
        </p>
      </header>
      {versions.length < 2 ? (
        <EmptyState title="Nothing to compare yet">
          <p>
            {name} has one version. Publish a newer one to compare them; its tasks stay on the version they were created
            with.
          </p>
        </EmptyState>
      ) : (
        <>
          <form className="filters wf-compare-form" method="get" aria-label="Versions to compare">
            <VersionSelect id="compare-from" name="from" label="Older" versions={versions} value={fromDefault} />
            <VersionSelect id="compare-to" name="to" label="Newer" versions={versions} value={toDefault} />
            <button type="submit" className="button button--primary">
              Compare
            </button>
          </form>
          {problem ? (
            <div className="notice notice--error" role="alert">
              {problem}
            </div>
          ) : null}
          {compare ? <DiffResult name={name} compare={compare} canMigrate={canMigrate} /> : null}
        </>
      )}
    </div>
  );
}

function DiffResult({ name, compare, canMigrate }: { name: string; compare: WorkflowCompare; canMigrate: boolean }) {
  const { from, to } = compare;
  const forward = from.version < to.version;
  return (
    <section className="card wf-diff" aria-labelledby="diff-heading">
      <h2 id="diff-heading">
        {compare.count === 0
          ? `v${from.version} and v${to.version} differ only in their version number`
          : `${pluralize(compare.count, "change")} from v${from.version} to v${to.version}`}
      </h2>
      <p className="hint">
        <Link href={workflowVersionHref(name, from.version)}>v{from.version}</Link> ({pluralize(from.taskCount, "task")}
        ) → <Link href={workflowVersionHref(name, to.version)}>v{to.version}</Link> ({pluralize(to.taskCount, "task")}).
        {forward ? null : " The older version is on the right: read “added” as what going back would add."}
      </p>
      {compare.sections.map((section) => (
        <section key={section.id} className="wf-diff__section" aria-labelledby={`diff-${section.id}`}>
          <h3 id={`diff-${section.id}`}>{section.title}</h3>
          <ul className="wf-diff__lines">
            {section.lines.map((line) => (
              <li key={`${line.mark}:${line.subject}`} className={`wf-diff__line wf-diff__line--${line.mark}`}>
                <span className={`wf-mark wf-mark--${line.mark}`}>{markWords[line.mark]}</span>{" "}
                <span className="mono wf-diff__subject">{line.subject}</span>
                {line.details.length ? (
                  <ul className="wf-diff__details">
                    {line.details.map((d) => (
                      <li key={d}>{d}</li>
                    ))}
                  </ul>
                ) : null}
              </li>
            ))}
          </ul>
        </section>
      ))}
      {canMigrate && forward && to.current && from.taskCount > 0 ? (
        <p className="wf-diff__migrate">
          <Link className="button" href={workflowMigrateHref(name, from.version, to.version)}>
            Plan moving v{from.version}&apos;s tasks to v{to.version}
          </Link>
        </p>
      ) : null}
    </section>
  );
}
