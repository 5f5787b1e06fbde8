import { alertStatusInfo, severityOfText } from "@/lib/adapters/console/alerts/alerts";
import type { AlertStatus } from "@/lib/generated/prisma/enums";

/** Severity by colour, word and glyph: readable without colour, and by a screen reader as "Severity: critical". */
export function SeverityBadge({ severity }: { severity: string }) {
  const info = severityOfText(severity);
  return (
    <span className={`alert-severity alert-severity--${info.tone}`}>
      <span className="alert-severity__glyph" aria-hidden="true">
        {info.glyph}
      </span>
      <span className="visually-hidden">Severity: </span>
      {info.label}
    </span>
  );
}

export function AlertStatusBadge({ status }: { status: AlertStatus }) {
  const info = alertStatusInfo[status];
  return (
    <span className={`badge badge--${info.tone}`} title={info.meaning}>
      {info.label}
    </span>
  );
}
