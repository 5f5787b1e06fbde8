import Link from "next/link";
import type { ReactNode } from "react";

/**
 * The header of the checkpoint pages: a breadcrumb that leads back through
 * the task (Tasks / task / Checkpoints / …), the title with its badges, the
 * live indicator, then whatever the page says below it (its facts).
 */
export function CheckpointsHeader({
  trail,
  current,
  title,
  badges,
  live,
  children,
}: {
  trail: Array<{ href: string; label: string; mono?: boolean }>;
  current: string;
  title: ReactNode;
  badges: ReactNode;
  live: ReactNode;
  children?: ReactNode;
}) {
  return (
    <header className="page-header">
      <nav aria-label="Breadcrumb" className="breadcrumb">
        <ol>
          {trail.map((crumb) => (
            <li key={crumb.href}>
              <Link href={crumb.href} className={crumb.mono ? "mono" : undefined}>
                {crumb.label}
              </Link>
            </li>
          ))}
          <li aria-current="page" className="mono">
            {current}
          </li>
        </ol>
      </nav>
      <div className="page-header__row">
        <h1 className="ckpt-title">{title}</h1>
        <div className="task-title__status">{badges}</div>
        <div className="page-header__aside">{live}</div>
      </div>
      {children}
    </header>
  );
}
