import Link from "next/link";
import type { ReactNode } from "react";

/**
 * The header of a page about one versioned record (a task, a review): the
 * breadcrumb back to its list, the title with its status and the version
 * every write names, the live-refresh indicator, and a line of facts.
 */
export function DetailPageHeader({
  parent,
  id,
  title,
  status,
  version,
  versionHint,
  live,
  children,
}: {
  /** The list this record belongs to, first in the breadcrumb. */
  parent: { href: string; label: string };
  id: string;
  /** The page's h1. */
  title: ReactNode;
  status: ReactNode;
  version: number;
  /** What the version means here (the tooltip of the version pill). */
  versionHint: string;
  live: ReactNode;
  /** The facts line: Fact elements. */
  children: ReactNode;
}) {
  return (
    <header className="page-header">
      <nav aria-label="Breadcrumb" className="breadcrumb">
        <ol>
          <li>
            <Link href={parent.href}>{parent.label}</Link>
          </li>
          <li aria-current="page" className="mono">
            {id}
          </li>
        </ol>
      </nav>
      <div className="page-header__row">
        {title}
        <div className="task-title__status">
          {status}
          <span className="version-pill" title={versionHint}>
            version {version}
          </span>
        </div>
        <div className="page-header__aside">{live}</div>
      </div>
      <dl className="facts facts--inline">{children}</dl>
    </header>
  );
}

/** One term and its value in the header's facts line. */
export function Fact({ term, className, children }: { term: string; className?: string; children: ReactNode }) {
  return (
    <div>
      <dt>{term}</dt>
      <dd className={className}>{children}</dd>
    </div>
  );
}
