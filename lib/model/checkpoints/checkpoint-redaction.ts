import { isSecretName } from "@/lib/core/secret-names";
import type { Redaction } from "@/lib/model/checkpoints/checkpoint-schema";

/**
 * What never enters a checkpoint (the spec: "do not checkpoint raw
 * chain-of-thought or secrets in cleartext"). A checkpoint outlives the
 * credentials it might capture and is read by more people than the task
 * was, so the rule is applied to every string of the document before it is
 * signed, free text included:
 *
 *   - members named like secrets (password, api_key, authorization, …:
 *     lib/core/secret-names.ts) keep their name, their value becomes the
 *     marker;
 *   - members named like raw reasoning (reasoning, chain_of_thought,
 *     scratchpad, …) are dropped with their value;
 *   - inside any string: tokens that look like credentials (Verity's own
 *     `vrt_…`, `sk_…`/`sk-…` keys, bearer credentials, JWTs, cloud access
 *     keys, PEM private keys, `password=…`-style assignments) and tagged
 *     reasoning blocks (<thinking>…</thinking>) are replaced by the marker.
 *
 * A replacement is never longer than the text it replaces, so a redacted
 * snapshot still fits the limits of TaskState. Each replacement is listed (path and kind, never the value) so the
 * inspector can say that something was removed and where.
 */
export const REDACTED = "[redacted]";

type Kind = Redaction["kind"];

const reasoningKeyName =
  /^(reasoning|reasoning[_-]?text|chain[_-]?of[_-]?thought|cot|scratch[_-]?pad|thoughts?|thinking|inner[_-]?monologue|raw[_-]?reasoning)$/i;

/** Patterns inside free text, most specific first (a bearer JWT is one bearer credential). */
const textPatterns: Array<{ kind: Kind; pattern: RegExp; keepGroup?: number }> = [
  {
    kind: "private_key",
    pattern: /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|$)/g,
  },
  { kind: "reasoning", pattern: /<(thinking|reasoning|scratchpad|chain[_-]?of[_-]?thought)>[\s\S]*?(?:<\/\1>|$)/gi },
  { kind: "bearer", pattern: /\bBearer\s+[A-Za-z0-9\-._~+/]{8,}=*/gi },
  { kind: "jwt", pattern: /\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}/g },
  { kind: "api_token", pattern: /(?<![A-Za-z0-9_])vrt_[A-Za-z0-9_-]{8,}/g },
  {
    kind: "secret_key",
    pattern: /(?<![A-Za-z0-9_])(?:sk|rk|pk_live|sk_live|sk_test|rk_live|rk_test)[_-][A-Za-z0-9_-]{12,}/g,
  },
  { kind: "secret_key", pattern: /(?<![A-Za-z0-9_])(?:ghp|gho|ghs|github_pat|xox[abpr])_[A-Za-z0-9_-]{12,}/g },
  { kind: "cloud_key", pattern: /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g },
  // `password: hunter2`, `api_key=abc…`, `"api_key": "abc…"`, `the password is hunter2`: the name stays, the value goes.
  {
    kind: "credential",
    pattern:
      /\b(password|passwd|passphrase|pwd|secret|client[_-]?secret|api[_-]?key|apikey|access[_-]?token|auth[_-]?token|token)(["']?\s*[:=]\s*|\s+is\s+)(?!\[redacted\])("[^"]*"|'[^']*'|[^\s,;]+)/gi,
    keepGroup: 2,
  },
];

export interface RedactionResult<T> {
  value: T;
  redactions: Redaction[];
}

/** A deep copy of `value` with the rule applied; `pathPrefix` names where the value sits in the document. */
export function redactForCheckpoint<T>(value: T, pathPrefix = ""): RedactionResult<T> {
  const redactions: Redaction[] = [];
  const out = walk(value, pathPrefix, redactions) as T;
  return { value: out, redactions };
}

function walk(value: unknown, path: string, redactions: Redaction[]): unknown {
  if (typeof value === "string") return redactText(value, path, redactions);
  if (Array.isArray(value)) return value.map((item, i) => walk(item, `${path}[${i}]`, redactions));
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [key, member] of Object.entries(value)) {
      const at = path ? `${path}.${key}` : key;
      if (reasoningKeyName.test(key)) {
        redactions.push({ path: at, kind: "reasoning" });
        continue;
      }
      if (isSecretName(key) && member !== null && member !== undefined && member !== "") {
        redactions.push({ path: at, kind: "credential" });
        out[key] = REDACTED;
        continue;
      }
      out[key] = walk(member, at, redactions);
    }
    return out;
  }
  return value;
}

export function redactText(text: string, path = "", redactions: Redaction[] = []): string {
  let result = text;
  for (const { kind, pattern, keepGroup } of textPatterns) {
    result = result.replace(pattern, (...match: unknown[]) => {
      redactions.push({ path, kind });
      if (keepGroup === undefined) return REDACTED;
      const groups = match as string[];
      const secret = groups[keepGroup + 1] ?? "";
      // Never longer than what it replaces: a redacted snapshot must still fit its schema's limits.
      return `${groups.slice(1, keepGroup + 1).join("")}${secret.length >= REDACTED.length ? REDACTED : "*".repeat(secret.length)}`;
    });
  }
  return result;
}
