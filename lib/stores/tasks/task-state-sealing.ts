import { tenantOfConnectionOrNull, type Db, type Tx } from "@/lib/db/client";
import { DEFAULT_TENANT_ID } from "@/lib/db/tenant-sessions";
import { AppError } from "@/lib/core/errors";
import { isSealed } from "@/lib/core/envelope-encryption";
import { encryptionAtRestOn } from "@/lib/config/keyring";
import { rankOf, taskStateClassifier, type Classifier } from "@/lib/model/data-classes";
import { getWorkflowByDigest } from "@/lib/model/workflows";
import { openText, sealText } from "@/lib/stores/field-encryption";

/**
 * The task state at rest (docs/encryption.md): every confidential or
 * restricted value of `tasks.state`, `transitions.state_after` and
 * `transitions.patch` is sealed on its own, in place, and everything else
 * stays as it is. The document keeps its shape (statuses, gates, budget,
 * ids and versions in the clear, each sealed leaf a `"vty1.…"` string), so
 * the monitor's SQL over it and the state_after = tasks.state check still
 * work; the engine itself only ever sees the opened document.
 *
 * A value is sealed where it lives: `tasks.state:<task id><pointer>` in the
 * state (the transition's state_after is the same bytes, copied by the CAS
 * statement), `transitions.patch:<transition id><pointer>` in a patch. A
 * sealed string moved to another task or another field does not open.
 *
 * A value a transition does not change keeps the sealed string it already
 * had: no new encryption, and its bytes in every later version are the
 * same. The stored form of a state opened here is remembered by the opened
 * object (a WeakMap, nothing else holds it), so the next write of that task
 * can find the previous ciphertext without reading the row twice.
 */

/** What a reader sees where a value does not open; the engine reads strictly and fails instead. */
export type OpenMode = "strict" | "readable";

const storedForms = new WeakMap<object, unknown>();

const SEALED_FROM: number = rankOf("confidential");

/**
 * The tenant whose key seals a value written on `db`, asked once per client:
 * a tenant's client (or the owner's) keeps its connection setting for its
 * whole life, and asking the database on every transition was a round trip
 * of its own on the hot path (bench:encryption). A transaction is asked each
 * time: the owner's may write as a tenant from the middle of it (writeAsTenant).
 */
const tenantOfClient = new WeakMap<object, string>();

async function connectionTenant(db: Db | Tx): Promise<string> {
  const known = tenantOfClient.get(db);
  if (known) return known;
  const tenant = (await tenantOfConnectionOrNull(db)) ?? DEFAULT_TENANT_ID;
  if ("$transaction" in db) tenantOfClient.set(db, tenant);
  return tenant;
}

export function taskStateContext(taskId: string, pointer: string): string {
  return `tasks.state:${taskId}${pointer}`;
}

function patchContext(transitionId: string, pointer: string): string {
  return `transitions.patch:${transitionId}${pointer}`;
}

const classifiers = new Map<string, Classifier>();

/** At most this many pointers' classes remembered per workflow: a state's fields, with room for long lists. */
const CLASSES_REMEMBERED = 4096;

/**
 * The classes of a state's (or a patch's) fields, under the workflow the
 * state is pinned to. Built once per workflow digest (a digest names one
 * immutable definition) and each pointer's class remembered: building it
 * and matching every leaf against every declaration on each transition was
 * a seventh of transitionTask's own CPU (bench:transitions, 2026-12-03).
 */
function classifierOf(workflowDigest: string): Classifier {
  const known = classifiers.get(workflowDigest);
  if (known) return known;
  const def = getWorkflowByDigest(workflowDigest);
  const classify = taskStateClassifier(def?.data_classes);
  const byPointer = new Map<string, ReturnType<Classifier>>();
  const remembered: Classifier = (tokens) => {
    const key = tokens.join("\u0000");
    let cls = byPointer.get(key);
    if (cls === undefined) {
      cls = classify(tokens);
      if (byPointer.size < CLASSES_REMEMBERED) byPointer.set(key, cls);
    }
    return cls;
  };
  // A digest this process does not know (yet) is not remembered: its definition may be loaded later.
  if (def) classifiers.set(workflowDigest, remembered);
  return remembered;
}

function pointerOf(tokens: readonly string[]): string {
  return tokens.map((t) => "/" + t.replace(/~/g, "~0").replace(/\//g, "~1")).join("");
}

function childAt(node: unknown, key: string): unknown {
  if (node === null || typeof node !== "object") return undefined;
  return (node as Record<string, unknown>)[key];
}

/**
 * Seals the confidential and restricted leaves of `value`. A leaf is a
 * string, number or boolean; null, empty lists and empty objects say
 * nothing and stay. `previous` is the same document as it was stored
 * (sealed) and as it read (opened): an unchanged leaf keeps its ciphertext.
 */
async function sealLeaves(
  db: Db | Tx,
  value: unknown,
  classify: Classifier,
  contextOf: (pointer: string) => string,
  previous?: { stored: unknown; opened: unknown },
): Promise<unknown> {
  if (!encryptionAtRestOn()) return value;
  // The walk itself is synchronous; the leaves to seal are sealed after it,
  // one at a time in document order, as the walk found them. (An await per
  // node of a state that has nothing to seal was most of this function's
  // cost on the transition path.)
  const toSeal: Array<{ into: Record<string, unknown> | unknown[]; key: string | number; tokens: string[] }> = [];
  const NOT_YET = Symbol("sealed below");
  const walk = (node: unknown, tokens: string[], stored: unknown, opened: unknown): unknown => {
    if (Array.isArray(node)) {
      const out: unknown[] = [];
      for (let i = 0; i < node.length; i++) {
        const child = walk(node[i], [...tokens, String(i)], childAt(stored, String(i)), childAt(opened, String(i)));
        if (child === NOT_YET) toSeal.push({ into: out, key: i, tokens: [...tokens, String(i)] });
        out.push(child);
      }
      return out;
    }
    if (node !== null && typeof node === "object") {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(node)) {
        if (v === undefined) continue;
        const child = walk(v, [...tokens, k], childAt(stored, k), childAt(opened, k));
        if (child === NOT_YET) toSeal.push({ into: out, key: k, tokens: [...tokens, k] });
        out[k] = child;
      }
      return out;
    }
    // Each leaf by its own class: the deepest declaration decides (an internal field declared under a confidential one stays in the clear).
    if (node === null || node === undefined || tokens.length === 0 || rankOf(classify(tokens)) < SEALED_FROM)
      return node;
    if (isSealed(stored) && JSON.stringify(opened) === JSON.stringify(node)) return stored;
    return NOT_YET;
  };
  const out = walk(value, [], previous?.stored, previous?.opened);
  if (toSeal.length === 0) return out;
  const tenant = await connectionTenant(db);
  for (const { into, key, tokens } of toSeal) {
    const leaf = tokens.reduce<unknown>((node, token) => childAt(node, token), value);
    (into as Record<string | number, unknown>)[key] = await sealText(
      db,
      contextOf(pointerOf(tokens)),
      JSON.stringify(leaf),
      tenant,
    );
  }
  return out;
}

/**
 * Opens every sealed leaf of a stored document, each under the context of
 * its place. Strict: a leaf whose key is gone is key_unavailable, one that
 * was altered or moved is invariant_violated. Readable: such a leaf reads
 * `[sealed value, unreadable: …]` and the rest of the document is shown.
 */
async function openLeaves(
  db: Db | Tx,
  stored: unknown,
  contextOf: (pointer: string) => string,
  mode: OpenMode,
): Promise<unknown> {
  const walk = async (node: unknown, tokens: string[]): Promise<unknown> => {
    if (isSealed(node)) {
      const context = contextOf(pointerOf(tokens));
      try {
        return JSON.parse(await openText(db, node, context)) as unknown;
      } catch (error) {
        if (mode === "readable" && error instanceof AppError) return `[sealed value, unreadable: ${error.message}]`;
        throw error;
      }
    }
    if (Array.isArray(node)) {
      const out: unknown[] = [];
      for (let i = 0; i < node.length; i++) out.push(await walk(node[i], [...tokens, String(i)]));
      return out;
    }
    if (node !== null && typeof node === "object") {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(node)) out[k] = await walk(v, [...tokens, k]);
      return out;
    }
    return node;
  };
  return walk(stored, []);
}

/** True when some leaf of a stored document is sealed: a document with none is read as it is, with no work. */
function holdsSealed(node: unknown): boolean {
  if (isSealed(node)) return true;
  if (Array.isArray(node)) return node.some(holdsSealed);
  if (node !== null && typeof node === "object") return Object.values(node).some(holdsSealed);
  return false;
}

/**
 * A task state as it is to be stored. `before`, the task's state as this
 * process opened it (openTaskState), lends its ciphertext to every value
 * the new state keeps.
 */
export async function sealTaskState<T extends { workflow_digest: string }>(
  db: Db | Tx,
  taskId: string,
  state: T,
  before?: object,
): Promise<unknown> {
  const stored = before ? storedForms.get(before) : undefined;
  const sealed = await sealLeaves(
    db,
    state,
    classifierOf(state.workflow_digest),
    (pointer) => taskStateContext(taskId, pointer),
    stored === undefined ? undefined : { stored, opened: before },
  );
  if (sealed !== null && typeof sealed === "object") storedForms.set(state, sealed);
  return sealed;
}

/**
 * A stored task state (tasks.state or transitions.state_after) with its
 * sealed values opened, as `parse` makes it; the result remembers its
 * stored form for sealTaskState.
 */
export async function openTaskState<T>(
  db: Db | Tx,
  taskId: string,
  stored: unknown,
  mode: OpenMode,
  parse: (opened: unknown) => T,
): Promise<T> {
  // Nothing sealed (encryption off, or a document from before): the stored form is the opened one.
  const opened = holdsSealed(stored)
    ? await openLeaves(db, stored, (pointer) => taskStateContext(taskId, pointer), mode)
    : stored;
  const parsed = parse(opened);
  if (parsed !== null && typeof parsed === "object") storedForms.set(parsed, stored);
  return parsed;
}

/** A transition's patch as it is to be stored, classed like the state it changes (`/subtasks/*\/title` is a title in both). */
export async function sealTaskPatch(
  db: Db | Tx,
  transitionId: string,
  workflowDigest: string,
  patch: unknown,
): Promise<unknown> {
  return sealLeaves(db, patch, classifierOf(workflowDigest), (pointer) => patchContext(transitionId, pointer));
}

/** A stored patch with its sealed values opened. */
export async function openTaskPatch(
  db: Db | Tx,
  transitionId: string,
  stored: unknown,
  mode: OpenMode,
): Promise<unknown> {
  if (!holdsSealed(stored)) return stored;
  return openLeaves(db, stored, (pointer) => patchContext(transitionId, pointer), mode);
}
