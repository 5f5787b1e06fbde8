import { shortIdentity } from "@/lib/adapters/console/shared/format";

/** An actor's SPIFFE ID, short on screen and whole on hover and for screen readers. */
export function Identity({ value, full = false }: { value: string; full?: boolean }) {
  return (
    <span className="identity" title={value}>
      {full ? value : shortIdentity(value)}
    </span>
  );
}
