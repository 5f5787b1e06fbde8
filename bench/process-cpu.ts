import { existsSync, readdirSync, readFileSync } from "node:fs";

/**
 * CPU time of processes on this machine, from /proc/<pid>/stat (Linux), for
 * the benchmarks that say where a side's CPU went: bench:effects (its own
 * process, the provider's, every postgres process) and bench:api (the
 * server's process group). Without /proc every figure is 0.
 */

/** What a process is selected by, and its user + system CPU seconds so far. */
interface ProcessCpu {
  pid: number;
  /** The command name (`comm`), e.g. "postgres". */
  command: string;
  /** The process group. */
  pgrp: number;
  seconds: number;
}

/** USER_HZ on Linux: /proc/<pid>/stat counts CPU in ticks of 1/100 s. */
const clockTicks = 100;

function readProcess(pid: number): ProcessCpu | null {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return null; // gone (or no /proc)
  }
  // "pid (comm) state ppid pgrp …": the command may hold spaces and parentheses, so split after the last ")".
  // After it: state is [0], pgrp [2], utime [11], stime [12].
  const command = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return { pid, command, pgrp: Number(fields[2]), seconds: (Number(fields[11]) + Number(fields[12])) / clockTicks };
}

/** One process's user + system CPU seconds; 0 when it is gone. */
export function processCpuSeconds(pid: number): number {
  return readProcess(pid)?.seconds ?? 0;
}

/** The user + system CPU seconds of every process `match` selects (a process that ends meanwhile counts no more). */
export function cpuSecondsWhere(match: (p: Omit<ProcessCpu, "seconds">) => boolean): number {
  let total = 0;
  for (const entry of existsSync("/proc") ? readdirSync("/proc") : []) {
    if (!/^\d+$/.test(entry)) continue;
    const p = readProcess(Number(entry));
    if (p && match(p)) total += p.seconds;
  }
  return total;
}
