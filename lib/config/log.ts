import pino, { type DestinationStream, type Logger as PinoLogger, type LoggerOptions as PinoOptions } from "pino";
import { getLogLevel, type LogLevel } from "@/lib/config/env";
import { isSecretName } from "@/lib/core/secret-names";
import { activeTraceIds } from "@/lib/config/tracing";

/**
 * The one logger of the server and its scripts: pino, levelled
 * (VERITY_LOG_LEVEL, default info), with secrets redacted before a line is
 * written. `info` says what changed (an execution settled, a message
 * delivered, an alert raised, a retention run); `debug` adds what was looked
 * at (each background tick, each sandbox request). A terminal gets one
 * readable line per record; anything else (a pipe, a file, a log collector)
 * gets pino's JSON lines. Warnings and errors go to stderr and the rest to
 * stdout, as console.error / console.log split them before.
 *
 * No pino transport and so no pino-pretty: a transport runs in a worker
 * thread that loads its target by file path (what Next's server bundle
 * rewrites) and buffers lines (what a SIGKILL loses: the chaos tests kill
 * processes mid-step). Lines here are written synchronously, in order with
 * console.log's, and the terminal format is the dozen lines of renderLine.
 *
 * With tracing on (lib/config/tracing.ts), a record written inside a span
 * carries `trace_id` and `span_id`: a log search by trace id finds every
 * line of one request, background pass or provider call.
 */
export type Logger = PinoLogger;
export type { LogLevel };

/** Where rendered lines go: process.stdout / process.stderr, or an array in a test. */
export interface LineSink {
  write(line: string): void;
}

export type LogFormat = "json" | "pretty";

export interface CreateLoggerOptions {
  level: LogLevel;
  format: LogFormat;
  /** trace, debug and info lines; process.stdout when omitted. */
  out?: LineSink;
  /** warn, error and fatal lines; process.stderr when omitted. */
  err?: LineSink;
}

export const REDACTED = "[redacted]";

const WARN = 40;

export function createLogger(options: CreateLoggerOptions): Logger {
  const out = options.out ?? process.stdout;
  const err = options.err ?? process.stderr;
  const render =
    options.format === "json"
      ? (line: string) => line
      : (line: string) => `${renderLine(JSON.parse(line) as LogRecord, { time: true })}\n`;
  return pino(
    baseOptions(options.level),
    levelRouted((line, level) => (level >= WARN ? err : out).write(render(line))),
  );
}

/**
 * A logger whose records arrive as plain lines (`msg key=value…`, the level
 * named when it is not info) at `write`: the seam for callers that take a
 * `log: (line) => void` (tests collecting lines, a script prefixing them).
 * Lines below `level` (VERITY_LOG_LEVEL unless given) never reach it.
 */
export function lineLogger(write: (line: string) => void, options: { level?: LogLevel } = {}): Logger {
  return pino(
    baseOptions(options.level ?? getLogLevel()),
    levelRouted((line) => write(renderLine(JSON.parse(line) as LogRecord, { time: false }))),
  );
}

function baseOptions(level: LogLevel): PinoOptions {
  return {
    level,
    timestamp: pino.stdTimeFunctions.isoTime,
    // Joins a record to its trace (docs/observability.md): the active span's ids, when tracing is on.
    mixin: () => activeTraceIds() ?? {},
    formatters: {
      level: (label) => ({ level: label }),
      bindings: (bindings) => redactValue(bindings) as Record<string, unknown>,
      log: (object) => redactValue(object) as Record<string, unknown>,
    },
    // Errors are turned into plain objects by redactValue (formatters.log runs first); this catches any other path.
    serializers: { err: (value: unknown) => (value instanceof Error ? redactValue(value) : value) },
    hooks: {
      // The message and its format arguments are not part of the object formatters.log sees.
      logMethod(args, method) {
        const redacted = args.map((a) => (typeof a === "string" ? redactText(a) : a)) as typeof args;
        // pino takes an Error's message as the line's message when none is given: redact that too.
        const first: unknown = redacted[0];
        if (first instanceof Error && redacted.length === 1)
          return method.apply(this, [first, redactText(first.message)]);
        return method.apply(this, redacted);
      },
    },
  };
}

/** pino tells a stream flagged with needsMetadataGsym each line's numeric level (as its own multistream does). */
function levelRouted(write: (line: string, level: number) => void): DestinationStream {
  const stream = {
    [pino.symbols.needsMetadataGsym]: true as const,
    lastLevel: 0,
    lastTime: "",
    lastMsg: "",
    lastObj: {},
    lastLogger: undefined as unknown as Logger,
    write(line: string) {
      write(line, stream.lastLevel);
    },
  };
  return stream;
}

interface LogRecord {
  level?: string;
  time?: string;
  pid?: number;
  hostname?: string;
  component?: string;
  msg?: string;
  err?: { type?: string; message?: string; stack?: string };
  [key: string]: unknown;
}

const LEVEL_WIDTH = 5;

/** `10:31:02.123 INFO  background: reconciled 1 execution(s) executions=["exe_…"]`, one record to one line (an error's stack below it). */
export function renderLine(record: LogRecord, options: { time: boolean }): string {
  const { level = "info", time, pid: _pid, hostname: _hostname, component, msg = "", err, ...fields } = record;
  const head = options.time
    ? `${formatClock(time)} ${level.toUpperCase().padEnd(LEVEL_WIDTH)} `
    : level === "info"
      ? ""
      : `${level}: `;
  const parts = [`${head}${component ? `${component}: ` : ""}${msg}`];
  for (const [key, value] of Object.entries(fields)) parts.push(`${key}=${formatValue(value)}`);
  if (err) parts.push(`err=${formatValue(`${err.type ?? "Error"}: ${err.message ?? ""}`)}`);
  let line = parts.join(" ");
  // A stack is for a person at a terminal; collected lines (time: false) stay one line each.
  if (options.time && err?.stack && (level === "error" || level === "fatal")) {
    line += `\n${err.stack
      .split("\n")
      .slice(1)
      .map((l) => `    ${l.trim()}`)
      .join("\n")}`;
  }
  return line;
}

function formatClock(iso: string | undefined): string {
  const d = iso ? new Date(iso) : new Date();
  const pad = (n: number, w = 2) => String(n).padStart(w, "0");
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
}

function formatValue(value: unknown): string {
  if (typeof value === "string")
    return /^[\w.:/@+\-[\]?=&%,]*$/.test(value) && value !== "" ? value : JSON.stringify(value);
  if (typeof value === "number" || typeof value === "boolean" || value === null) return String(value);
  return JSON.stringify(value) ?? String(value);
}

// ---- Redaction -------------------------------------------------------------
//
// What the code handles that must never reach a log line: API bearer tokens
// (`vrt_…`) and the Authorization header carrying them; console session
// cookies; passwords and their hashes; the session secret (NEXTAUTH_SECRET),
// the sandbox's webhook secret and its Sandbox-Signature header; checkpoint
// signing keys (VERITY_CHECKPOINT_KEYS); database URLs with a password. The
// rule is the same as a checkpoint's (lib/model/checkpoints/checkpoint-redaction.ts):
// members named like a secret (lib/core/secret-names.ts, the one list of
// those names) keep their name and lose their value, and
// credential-shaped text inside any string is replaced, so an error message
// quoting a header or a URL is safe too.

/** Credential-shaped text, most specific first; each keeps the name and drops the value. */
const textPatterns: Array<[RegExp, string]> = [
  [/-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|$)/g, REDACTED],
  // `Authorization: Bearer …`, `Cookie: a=b; c=d`, `Sandbox-Signature: t=…,v1=…`: the header's whole value.
  [
    /\b((?:proxy-)?authorization|(?:set-)?cookie|sandbox-signature)(["']?\s*:\s*)(?!\[redacted\])("[^"]*"|'[^']*'|[^\r\n]+)/gi,
    `$1$2${REDACTED}`,
  ],
  [/\b(Bearer|Basic)\s+(?!\[redacted\])[A-Za-z0-9\-._~+/]+=*/gi, `$1 ${REDACTED}`],
  [/(?<![A-Za-z0-9_])vrt_[A-Za-z0-9_-]{8,}/g, `vrt_${REDACTED}`],
  [/\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}/g, REDACTED],
  // scheme://user:password@host: the password.
  [/\b([a-z][a-z0-9+.-]*:\/\/[^\s/:@]+):[^\s/@]+@/gi, `$1:${REDACTED}@`],
  // Sandbox-Signature's own shape, wherever it appears without its header name.
  [/\bt=\d+,v1=[0-9a-f]{16,}/g, REDACTED],
  // `password=…`, `api_key: …`, `"client_secret":"…"`, `next-auth.session-token=…` (query strings, cookies, JSON, prose).
  [
    /\b([\w.-]*?(?:password|passwd|passphrase|secret|signature|api[_-]?key|signing[_-]?key|private[_-]?key|checkpoint[_-]?keys|(?<!fencing[_-]?)token))(["']?\s*[:=]\s*)(?!\[redacted\])("[^"]*"|'[^']*'|[^\s,;&"']+)/gi,
    `$1$2${REDACTED}`,
  ],
];

/** `text` with every credential-shaped part replaced by the marker. */
export function redactText(text: string): string {
  let out = text;
  for (const [pattern, replacement] of textPatterns) out = out.replace(pattern, replacement);
  return out;
}

const MAX_DEPTH = 8;

/**
 * A copy of `value` safe to log: secret-named members censored, strings
 * passed through redactText, Errors made plain (type, message, stack, code,
 * cause). Other class instances (Dates, Prisma decimals) are left to their
 * own JSON form.
 */
export function redactValue(value: unknown): unknown {
  return walk(value, 0, new WeakSet());
}

function walk(value: unknown, depth: number, seen: WeakSet<object>): unknown {
  if (typeof value === "string") return redactText(value);
  if (value === null || typeof value !== "object") return value;
  if (seen.has(value)) return "[circular]";
  if (depth >= MAX_DEPTH) return "[nested too deep]";
  seen.add(value);
  try {
    // pino's serializer (type, message and stack with their causes, own members such as `code`) on a prototype of its own: copied plain.
    if (value instanceof Error)
      return walk(Object.fromEntries(Object.entries(pino.stdSerializers.err(value))), depth, seen);
    if (Array.isArray(value)) return value.map((item) => walk(item, depth + 1, seen));
    const proto = Object.getPrototypeOf(value) as unknown;
    if (proto !== Object.prototype && proto !== null) return value;
    const out: Record<string, unknown> = {};
    for (const [key, member] of Object.entries(value)) {
      out[key] =
        isSecretName(key) && member !== undefined && member !== null && member !== ""
          ? REDACTED
          : walk(member, depth + 1, seen);
    }
    return out;
  } finally {
    seen.delete(value);
  }
}

// Last: creating it runs the redaction above (its bindings), which must be initialized first.
/** The process's logger. `json` unless stdout is a terminal. */
export const logger: Logger = createLogger({ level: getLogLevel(), format: process.stdout.isTTY ? "pretty" : "json" });

/**
 * A logger for one part of the system: its lines carry `component` (shown as
 * `component: msg` on a terminal) and `bindings`, redacted here because pino
 * formats a child's bindings without the parent's formatters.
 */
export function childLogger(
  component: string,
  bindings: Record<string, unknown> = {},
  parent: Logger = logger,
): Logger {
  return parent.child(redactValue({ component, ...bindings }) as Record<string, unknown>);
}
