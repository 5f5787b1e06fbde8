import {
  noteSchema,
  refundSchema,
  releaseSchema,
  rollbackSchema,
  type SandboxNote,
  type SandboxRefund,
  type SandboxRelease,
  type SandboxRollback,
} from "@/lib/connectors/sandbox/contract";
import { IdempotencyStore } from "@/programs/sandbox/idempotency-store";
import {
  memoryJournal,
  openFileJournal,
  type Journal,
  type JournalRecord,
  type Namespace,
} from "@/programs/sandbox/journal";

/**
 * The one owner of the sandbox's state: refunds, notes and the idempotency
 * keys that created them. Every change goes through `commit`, which makes it
 * durable in the journal first and visible second, so nothing is ever read
 * (or replayed to a client) that a crash could take back.
 */
export class SandboxStore {
  readonly keys = new IdempotencyStore();
  private readonly refunds: SandboxRefund[] = [];
  private readonly refundById = new Map<string, SandboxRefund>();
  private readonly refundByKey = new Map<string, SandboxRefund>();
  private readonly notes: SandboxNote[] = [];
  private readonly noteByKey = new Map<string, SandboxNote>();
  private readonly releases: SandboxRelease[] = [];
  private readonly releaseByKey = new Map<string, SandboxRelease>();
  private readonly rollbacks: SandboxRollback[] = [];
  private readonly rollbackByKey = new Map<string, SandboxRollback>();

  private constructor(private readonly journal: Journal) {}

  /** With a path, state is replayed from and written to that journal; without, it lives in memory only. */
  static async open(journalPath?: string): Promise<SandboxStore> {
    if (!journalPath) return new SandboxStore(memoryJournal());
    const { journal, records } = await openFileJournal(journalPath);
    const store = new SandboxStore(journal);
    try {
      for (const record of records) store.apply(record);
    } catch (error) {
      await journal.close();
      throw error;
    }
    return store;
  }

  get journalPath(): string | null {
    return this.journal.path;
  }

  /** Durable, then visible. The caller holds the key's claim. */
  async commit(
    namespace: Namespace,
    key: string,
    fingerprint: string,
    body: SandboxRefund | SandboxNote | SandboxRelease | SandboxRollback,
  ): Promise<void> {
    const record: JournalRecord = {
      v: 1,
      type: "committed",
      namespace,
      idempotency_key: key,
      fingerprint,
      status: 200,
      body,
      at: new Date().toISOString(),
    };
    await this.journal.append(record);
    this.apply(record);
  }

  private apply(record: JournalRecord): void {
    const key = record.idempotency_key;
    switch (record.namespace) {
      case "refunds": {
        const refund = refundSchema.parse(record.body);
        this.keys.complete("refunds", key, record.fingerprint, { status: record.status, body: refund });
        this.refunds.push(refund);
        this.refundById.set(refund.id, refund);
        this.refundByKey.set(key, refund);
        return;
      }
      case "crm_notes": {
        const note = noteSchema.parse(record.body);
        this.keys.complete("crm_notes", key, record.fingerprint, { status: record.status, body: note });
        this.notes.push(note);
        this.noteByKey.set(key, note);
        return;
      }
      case "releases": {
        const release = releaseSchema.parse(record.body);
        this.keys.complete("releases", key, record.fingerprint, { status: record.status, body: release });
        this.releases.push(release);
        this.releaseByKey.set(key, release);
        return;
      }
      case "rollbacks": {
        const rollback = rollbackSchema.parse(record.body);
        this.keys.complete("rollbacks", key, record.fingerprint, { status: record.status, body: rollback });
        this.rollbacks.push(rollback);
        this.rollbackByKey.set(key, rollback);
        return;
      }
    }
  }

  refund(id: string): SandboxRefund | undefined {
    return this.refundById.get(id);
  }

  refundByIdempotencyKey(key: string): SandboxRefund | undefined {
    return this.refundByKey.get(key);
  }

  listRefunds(): readonly SandboxRefund[] {
    return this.refunds;
  }

  noteByIdempotencyKey(key: string): SandboxNote | undefined {
    return this.noteByKey.get(key);
  }

  listNotes(customerId?: string): SandboxNote[] {
    return customerId === undefined ? [...this.notes] : this.notes.filter((n) => n.customer_id === customerId);
  }

  releaseByIdempotencyKey(key: string): SandboxRelease | undefined {
    return this.releaseByKey.get(key);
  }

  listReleases(): readonly SandboxRelease[] {
    return this.releases;
  }

  /** The newest deployed release of exactly this service, version, environment and commit. */
  deployedRelease(of: {
    service: string;
    version: string;
    environment: string;
    commit: string;
  }): SandboxRelease | undefined {
    return this.releases.findLast(
      (r) =>
        r.service === of.service &&
        r.version === of.version &&
        r.environment === of.environment &&
        r.commit === of.commit,
    );
  }

  rollbackByIdempotencyKey(key: string): SandboxRollback | undefined {
    return this.rollbackByKey.get(key);
  }

  listRollbacks(): readonly SandboxRollback[] {
    return this.rollbacks;
  }

  counts(): { refunds: number; notes: number; releases: number; rollbacks: number } {
    return {
      refunds: this.refunds.length,
      notes: this.notes.length,
      releases: this.releases.length,
      rollbacks: this.rollbacks.length,
    };
  }

  /** Forgets everything, on disk too. Only /__sandbox/reset calls this. */
  async reset(): Promise<void> {
    await this.journal.truncate();
    this.keys.clear();
    this.refunds.length = 0;
    this.refundById.clear();
    this.refundByKey.clear();
    this.notes.length = 0;
    this.noteByKey.clear();
    this.releases.length = 0;
    this.releaseByKey.clear();
    this.rollbacks.length = 0;
    this.rollbackByKey.clear();
  }

  close(): Promise<void> {
    return this.journal.close();
  }
}
