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
      <pre className="evidence__json">{JSON.stringify(evidence, null, 2)}</pre>
    </details>
  );
}
