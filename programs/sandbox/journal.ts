import { mkdir, open, readFile, type FileHandle } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";

/**
 * The sandbox's durable state: an append-only JSON Lines file, one committed
 * mutation per line, replayed at start. A line is written and fdatasync'd
 * before the mutation becomes visible or is answered, so "committed" means
 * it survives a crash of the process or the machine.
 *
 * Crash safety: a crash mid-write leaves at most one torn line at the end; it
 * was never acknowledged, so replay drops it and truncates the file back to
 * the last newline. A bad line anywhere else is corruption and stops the
 * start. After a failed append the journal stops taking writes (fail-stop):
 * the failed line may or may not be on disk, and accepting more writes after
 * it could bury a torn line in the middle of the file.
 *
 * One process per journal file; nothing here locks it.
 */

export const namespaces = ["refunds", "crm_notes", "releases", "rollbacks"] as const;
export type Namespace = (typeof namespaces)[number];

export const journalRecordSchema = z.object({
  v: z.literal(1),
  type: z.literal("committed"),
  namespace: z.enum(namespaces),
  idempotency_key: z.string(),
  /** Digest of the request that created it: a retry must match it to be replayed. */
  fingerprint: z.string(),
  status: z.number().int(),
  body: z.unknown(),
  at: z.iso.datetime(),
});
export type JournalRecord = z.infer<typeof journalRecordSchema>;

export class JournalUnavailableError extends Error {
  override name = "JournalUnavailableError";
}

export interface Journal {
  readonly path: string | null;
  /** Resolves once the record is durable; rejects if it may not be. */
  append(record: JournalRecord): Promise<void>;
  /** Empties the journal (the sandbox's reset). */
  truncate(): Promise<void>;
  close(): Promise<void>;
}

/** For tests: the same interface, nothing written. */
export function memoryJournal(): Journal {
  return { path: null, append: async () => undefined, truncate: async () => undefined, close: async () => undefined };
}

export async function openFileJournal(file: string): Promise<{ journal: Journal; records: JournalRecord[] }> {
  const dir = path.dirname(file);
  await mkdir(dir, { recursive: true });
  const { records, keepBytes, existed } = await readJournal(file);
  const handle = await open(file, "a");
  if (keepBytes !== null) {
    await handle.truncate(keepBytes);
    await handle.datasync();
  }
  if (!existed) await syncDirectory(dir);
  return { journal: new FileJournal(file, handle), records };
}

async function readJournal(
  file: string,
): Promise<{ records: JournalRecord[]; keepBytes: number | null; existed: boolean }> {
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return { records: [], keepBytes: null, existed: false };
    throw error;
  }
  const end = bytes.lastIndexOf(0x0a) + 1;
  const keepBytes = end < bytes.length ? end : null;
  const lines = bytes.subarray(0, end).toString("utf8").split("\n").slice(0, -1);
  const records = lines.map((line, i) => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      throw new Error(`sandbox journal ${file}: line ${i + 1} is not JSON; the file is corrupt`);
    }
    const record = journalRecordSchema.safeParse(parsed);
    if (!record.success)
      throw new Error(`sandbox journal ${file}: line ${i + 1} is not a journal record: ${record.error.message}`);
    return record.data;
  });
  return { records, keepBytes, existed: true };
}

/** A new file's directory entry is durable only once the directory is synced. */
async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

class FileJournal implements Journal {
  /** Appends run one after another, so lines never interleave. */
  private tail: Promise<void> = Promise.resolve();
  private broken: Error | null = null;
  private isClosed = false;

  constructor(
    readonly path: string,
    private readonly handle: FileHandle,
  ) {}

  append(record: JournalRecord): Promise<void> {
    const line = `${JSON.stringify(record)}\n`;
    const write = this.tail.then(async () => {
      // A handler that outlived close(): refused as "nothing written", which is true.
      if (this.isClosed) throw new JournalUnavailableError("the journal is closed");
      if (this.broken)
        throw new JournalUnavailableError(
          `the journal stopped taking writes after an earlier failure: ${this.broken.message}`,
        );
      try {
        await this.handle.appendFile(line);
        await this.handle.datasync();
      } catch (error) {
        this.broken = error instanceof Error ? error : new Error(String(error));
        throw error;
      }
    });
    this.tail = write.catch(() => undefined);
    return write;
  }

  truncate(): Promise<void> {
    const done = this.tail.then(async () => {
      await this.handle.truncate(0);
      await this.handle.datasync();
    });
    this.tail = done.catch(() => undefined);
    return done;
  }

  async close(): Promise<void> {
    if (this.isClosed) return;
    this.isClosed = true;
    // Writes queued before close() finish; any queued later see isClosed.
    await this.tail;
    await this.handle.close();
  }
}
