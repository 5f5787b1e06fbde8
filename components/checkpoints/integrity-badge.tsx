import { integrityStatusInfo, type IntegrityVerdict } from "@/lib/adapters/console/checkpoints/checkpoints-format";

/** Valid, corrupt or unverifiable: a mark and a word as well as a colour; the reason on hover and for screen readers. */
export function IntegrityBadge({ verdict, explain = false }: { verdict: IntegrityVerdict; explain?: boolean }) {
  const info = integrityStatusInfo[verdict.status];
  return (
    <span className="ckpt-integrity">
      <span
        className={`badge badge--${info.tone} ckpt-integrity__badge`}
        title={verdict.reason}
        data-integrity={verdict.status}
      >
        <span aria-hidden="true">{info.glyph}</span> {info.label}
      </span>
      {explain ? (
        <span className="ckpt-integrity__reason">{verdict.reason}</span>
      ) : (
        <span className="visually-hidden">: {verdict.reason}</span>
      )}
    </span>
  );
}
