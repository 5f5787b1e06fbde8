import type { ReactNode } from "react";

/**
 * The box a table scrolls sideways in when it is wider than the screen, for a
 * table with no link or button of its own: the keyboard can reach it (and so
 * scroll it), and a screen reader names it (axe: scrollable-region-focusable).
 * A table with links inside needs only the plain `.table-wrap` div.
 */
export function TableWrap({ label, children }: { label: string; children: ReactNode }) {
  return (
    // A focusable region: without a tab stop, a keyboard cannot scroll the box.
    <div className="table-wrap" role="region" aria-label={label} tabIndex={0}>
      {children}
    </div>
  );
}
