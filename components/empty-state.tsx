import type { ReactNode } from "react";

export function EmptyState({
  title,
  children,
  tone = "plain",
  level = 2,
}: {
  title: string;
  children?: ReactNode;
  tone?: "plain" | "error";
  /** 1 when the empty state is the whole page (not found, forbidden): every page has an h1. */
  level?: 1 | 2;
}) {
  const Heading = level === 1 ? "h1" : "h2";
  return (
    <div className={`empty-state empty-state--${tone}`} role={tone === "error" ? "alert" : undefined}>
      <Heading className="empty-state__title">{title}</Heading>
      {children ? <div className="empty-state__body">{children}</div> : null}
    </div>
  );
}
