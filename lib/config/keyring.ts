import { randomBytes } from "node:crypto";
import { closeSync, mkdirSync, openSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { z } from "zod";
import { AppError } from "@/lib/core/errors";
import { DATA_KEY_BYTES, unwrapKey, wrapKey } from "@/lib/core/envelope-encryption";
import { getEnv } from "@/lib/config/env";
import { childLogger } from "@/lib/config/log";

/**
 * Key-encryption keys (KEKs): each tenant's keys that wrap its data keys.
 * Data keys live in the database, wrapped (lib/stores/data-keys.ts); the KEKs
 * never do. This interface is the whole contract a key provider meets, shaped
 * so a cloud KMS (AWS KMS Encrypt/Decrypt, GCP Cloud KMS, Vault transit)
 * plugs in: it wraps and unwraps small keys by name and rotates, and the
 * application never sees a KEK.
 */
export interface KeyProvider {
  /** Which provider, for status pages and errors. */
  readonly name: string;
  /** Wraps a new data key under the tenant's current KEK (creating the tenant's first KEK if it has none). */
  wrap(tenantId: string, dataKey: Buffer): Promise<{ kekId: string; wrapped: string }>;
  /** Unwraps a data key; throws AppError key_unavailable when the KEK is gone or the provider cannot be read. */
  unwrap(tenantId: string, kekId: string, wrapped: string): Promise<Buffer>;
  /** A new current KEK for the tenant; older ones stay to unwrap what they wrapped until it is re-wrapped. */
  rotate(tenantId: string): Promise<string>;
  /** Forgets every KEK of the tenant: whatever they wrapped never opens again (crypto-shredding). */
  destroy(tenantId: string): Promise<void>;
}

const KeyringSchema = z.object({
  format: z.literal(1),
  tenants: z.record(
    z.string(),
    z.object({
      current: z.string(),
      keys: z.record(z.string(), z.string()),
      destroyed_at: z.string().optional(),
    }),
  ),
});
type Keyring = z.infer<typeof KeyringSchema>;

/**
 * The default provider: a JSON keyring file (VERITY_KEYRING_FILE, default
 * <data folder>/keys/keyring.json), 0600 in a 0700 folder, each write a
 * rename so a crash never leaves half a file. A missing file is created
 * empty on the first wrap; a file that exists but cannot be read or parsed
 * is an error, never an empty keyring (which would look like lost keys and
 * make new ones). Reads go to the file each time a data key is unwrapped,
 * which the stores do once per key and process (they cache the data key).
 */
export class LocalKeyringProvider implements KeyProvider {
  readonly name = "local keyring file";

  constructor(readonly file: string) {}

  async wrap(tenantId: string, dataKey: Buffer) {
    let tenant = this.read({ createIfMissing: true }).tenants[tenantId];
    if (!tenant) {
      tenant = this.update((ring) => {
        // Another process may have made it since the read above: theirs is the one.
        ring.tenants[tenantId] ??= {
          current: kekIdFor(tenantId, 1),
          keys: { [kekIdFor(tenantId, 1)]: randomBytes(DATA_KEY_BYTES).toString("base64") },
        };
        return ring.tenants[tenantId];
      });
    }
    if (tenant.destroyed_at)
      throw new AppError("key_unavailable", `The keys of tenant ${tenantId} were destroyed at ${tenant.destroyed_at}.`);
    const kek = Buffer.from(tenant.keys[tenant.current]!, "base64");
    return { kekId: tenant.current, wrapped: wrapKey(kek, dataKey, tenant.current) };
  }

  async unwrap(tenantId: string, kekId: string, wrapped: string) {
    const tenant = this.read({ createIfMissing: false }).tenants[tenantId];
    const kek = tenant?.keys[kekId];
    if (!kek) {
      const why = tenant?.destroyed_at
        ? `were destroyed at ${tenant.destroyed_at}`
        : `do not include key ${kekId}: restore the keyring this data was written with`;
      throw this.unavailable(`The keys of tenant ${tenantId} in the keyring ${why}.`);
    }
    try {
      return unwrapKey(Buffer.from(kek, "base64"), wrapped);
    } catch {
      throw this.unavailable(`Key ${kekId} in the keyring does not open a data key it is said to wrap.`);
    }
  }

  async rotate(tenantId: string) {
    return this.update((ring) => {
      const tenant = ring.tenants[tenantId];
      if (tenant?.destroyed_at)
        throw new AppError(
          "key_unavailable",
          `The keys of tenant ${tenantId} were destroyed at ${tenant.destroyed_at}.`,
        );
      const next = tenant ? Math.max(...Object.keys(tenant.keys).map(kekNumber)) + 1 : 1;
      const kekId = kekIdFor(tenantId, next);
      ring.tenants[tenantId] = {
        current: kekId,
        keys: { ...(tenant?.keys ?? {}), [kekId]: randomBytes(DATA_KEY_BYTES).toString("base64") },
      };
      return kekId;
    });
  }

  async destroy(tenantId: string) {
    this.update((ring) => {
      ring.tenants[tenantId] = { current: "", keys: {}, destroyed_at: new Date().toISOString() };
    });
  }

  /**
   * Read, change and write the file under an exclusive lock file, so two
   * processes adding a tenant's first key at once cannot each write their own
   * (the loser's data key would be wrapped by a key that no longer exists).
   */
  private update<T>(change: (ring: Keyring) => T): T {
    mkdirSync(path.dirname(this.file), { recursive: true, mode: 0o700 });
    const lock = `${this.file}.lock`;
    const deadline = Date.now() + 10_000;
    for (;;) {
      try {
        closeSync(openSync(lock, "wx", 0o600));
        break;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
        // A holder that died leaves its lock: one older than the deadline's span is stale.
        if (Date.now() - lockMadeAt(lock) > 30_000) unlinkSync(lock);
        if (Date.now() > deadline) throw this.unavailable(`The keyring stayed locked (its .lock file) for 10 s.`);
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
      }
    }
    try {
      const ring = this.read({ createIfMissing: true });
      const result = change(ring);
      this.write(ring);
      return result;
    } finally {
      unlinkSync(lock);
    }
  }

  private read({ createIfMissing }: { createIfMissing: boolean }): Keyring {
    let text: string;
    try {
      text = readFileSync(this.file, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") {
        if (createIfMissing) return { format: 1, tenants: {} };
        throw this.unavailable(
          "The keyring does not exist: restore it from its backup (the database holds only wrapped keys).",
        );
      }
      throw this.unavailable(`The keyring cannot be read (${(error as NodeJS.ErrnoException).code ?? "error"}).`);
    }
    const parsed = KeyringSchema.safeParse(safeJson(text));
    if (!parsed.success) throw this.unavailable("The keyring is not a valid keyring file.");
    return parsed.data;
  }

  /**
   * The error callers see names the setting, not the server's path (agents
   * read these answers); the log, which only the operators read, has the file.
   */
  private unavailable(message: string): AppError {
    childLogger("keys").error({ keyring: this.file }, message);
    return new AppError("key_unavailable", `${message} (key provider: ${this.name}, VERITY_KEYRING_FILE)`);
  }

  private write(ring: Keyring): void {
    mkdirSync(path.dirname(this.file), { recursive: true, mode: 0o700 });
    const temp = `${this.file}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
    writeFileSync(temp, `${JSON.stringify(ring, null, 2)}\n`, { mode: 0o600 });
    renameSync(temp, this.file);
  }
}

/** When the lock file was made (its mtime), or now if it just went away. */
function lockMadeAt(lock: string): number {
  try {
    return statSync(lock).mtimeMs;
  } catch {
    return Date.now();
  }
}

function kekIdFor(tenantId: string, n: number): string {
  return `kek-${tenantId}-${n}`;
}

function kekNumber(kekId: string): number {
  return Number(kekId.slice(kekId.lastIndexOf("-") + 1)) || 0;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

let provider: KeyProvider | undefined;

/** The process's key provider, from the configuration. */
export function getKeyProvider(): KeyProvider {
  if (!provider) {
    const env = getEnv();
    provider = new LocalKeyringProvider(env.VERITY_KEYRING_FILE ?? path.join(env.dataDir, "keys", "keyring.json"));
  }
  return provider;
}

/** Whether new confidential values are sealed (VERITY_ENCRYPTION_AT_REST). */
export function encryptionAtRestOn(): boolean {
  return getEnv().VERITY_ENCRYPTION_AT_REST === "on";
}
