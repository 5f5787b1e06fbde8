/** Why an edge cannot be taken now: one reason inline, several as a list. */
export function BlockedReasons({ id, prefix, reasons }: { id?: string; prefix: string; reasons: string[] }) {
  if (reasons.length === 1) {
    return (
      <p id={id} className="blocked-reason">
        {prefix}: {reasons[0]}
      </p>
    );
  }
  return (
    <div id={id}>
      <p className="blocked-reason">{prefix}:</p>
      <ul className="blocked-reason">
        {reasons.map((r) => (
          <li key={r}>{r}</li>
        ))}
      </ul>
    </div>
  );
}
