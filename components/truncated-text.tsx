/**
 * A long value (an id, a key) cut to its column with an ellipsis. The whole
 * value stays in the text (screen readers and copy get all of it), in the
 * title on hover, and in view while its table row holds the keyboard focus
 * (globals.css, "tables that fit").
 */
export function TruncatedText({ value, className }: { value: string; className?: string }) {
  return (
    <span className={className ? `truncate ${className}` : "truncate"} title={value}>
      {value}
    </span>
  );
}
