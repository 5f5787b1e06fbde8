import { UsageError } from "@/programs/cli/cli-database";

const unitMs = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** `90s`, `15m`, `1h`, `30d`: a command-line duration in milliseconds. */
export function parseDurationArg(value: string, option: string): number {
  const m = /^(\d{1,6})([smhd])$/.exec(value.trim());
  if (!m) throw new UsageError(`${option} must be a number and a unit (s, m, h, d), e.g. 30d; not "${value}"`);
  return Number(m[1]) * unitMs[m[2] as keyof typeof unitMs];
}
