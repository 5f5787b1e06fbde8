import type { ReactNode } from "react";

export function EmptyState({
  title,
  children,
  tone = "plain",
}: {
  title: string;
  children?: ReactNode;
  tone?: "plain" | "error";
}) {
  return (
    <div className={`empty-state empty-state--${tone}`} role={tone === "error" ? "alert" : undefined}>
      <h2 className="empty-state__title">{title}</h2>
      {children ? <div className="empty-state__body">{children}</div> : null}
    </div>
  );
}
