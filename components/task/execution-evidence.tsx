import { jsonPreview } from "@/lib/adapters/console/shared/json-preview";

/** Evidence as one scannable line, with the whole document one keypress away (a native disclosure). */
export function EvidenceDetails({
  evidence,
  summary,
  label = "Evidence",
}: {
  evidence: unknown;
  summary: string;
  label?: string;
}) {
  return (
    <details className="evidence">
      <summary>
        <span className="evidence__label">{label}</span>
        {summary ? <span className="evidence__summary">{summary}</span> : null}
      </summary>
      <JsonBlock value={evidence} />
    </details>
  );
}

/**
 * Stored JSON, pretty-printed: the first few thousand characters, the rest
 * behind "Show more" (lib/adapters/console/shared/json-preview.ts), so a
 * large value costs the page what it shows.
 */
export function JsonBlock({ value, className = "evidence__json" }: { value: unknown; className?: string }) {
  const preview = jsonPreview(value);
  return (
    <>
      <pre className={className}>{preview.head}</pre>
      {preview.rest ? (
        <details className="evidence__more">
          <summary>Show the remaining {preview.rest.length.toLocaleString("en-US")} characters</summary>
          <pre className={className}>{preview.rest}</pre>
        </details>
      ) : null}
      {preview.omitted ? (
        <p className="hint">
          Cut short: members nested deeper than 32 levels show as {"{…}"}, and nothing past 256 KB is shown.
        </p>
      ) : null}
    </>
  );
}
