/**
 * Says, in words, that values on the page read "[restricted]" and why: the
 * server masked them (lib/use-cases/data-classes/mask-for-reader.ts) because
 * the reader's role has no clearance. Nothing when nothing was masked.
 */
export function MaskedFieldsNotice({ fields }: { fields: readonly string[] }) {
  if (fields.length === 0) return null;
  return (
    <p className="notice notice--info" data-testid="masked-fields">
      {fields.length === 1 ? "One field is" : `${fields.length} fields are`} restricted and shown as “[restricted]”:
      your role has no clearance to see restricted data (<span className="mono">{fields.join(", ")}</span>).
    </p>
  );
}
