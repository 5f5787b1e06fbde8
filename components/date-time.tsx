import { formatDateTime } from "@/lib/adapters/console/shared/format";

export function DateTime({ value }: { value: Date }) {
  return (
    <time dateTime={value.toISOString()} title={value.toISOString()}>
      {formatDateTime(value)}
    </time>
  );
}
