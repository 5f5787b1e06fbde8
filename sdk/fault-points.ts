import { faultPoints, type FaultPoint, type FaultPointHook } from "./tool-protocol";

/**
 * The hook chaos tests use: `VERITY_FAULT_KILL_AT=after_call` makes the
 * process SIGKILL itself at that point — no finally blocks, no flushes, no
 * lease release, exactly like a crashed worker.
 */
export function parseFaultPoints(value: string | undefined): FaultPoint[] {
  if (!value?.trim()) return [];
  return value.split(",").map((raw) => {
    const name = raw.trim();
    if (!(faultPoints as readonly string[]).includes(name))
      throw new Error(`unknown fault point "${name}"; known: ${faultPoints.join(", ")}`);
    return name as FaultPoint;
  });
}

export function killAtFaultPoints(
  points: readonly FaultPoint[],
  onKill?: (point: FaultPoint) => void,
): FaultPointHook | undefined {
  if (points.length === 0) return undefined;
  return (point) => {
    if (!points.includes(point)) return;
    onKill?.(point);
    process.kill(process.pid, "SIGKILL");
  };
}
