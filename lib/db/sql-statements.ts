/**
 * Just enough SQL lexing for the migration applier (lib/db/migrate.ts): where
 * the top-level statements of a migration.sql begin and end. Quotes ('…',
 * E'…' with backslash escapes, "…"), dollar quotes ($$…$$, $tag$…$tag$, the
 * audit log's function bodies) and comments (--, nested /* *\/) are skipped,
 * so a `;` or a `BEGIN` inside them never counts.
 */

/** The statements of a script, in order, each trimmed and without its `;`; comment-only pieces are dropped. */
export function splitSqlStatements(script: string): string[] {
  const statements: string[] = [];
  let start = 0;
  let i = 0;
  const n = script.length;
  const push = (end: number) => {
    const text = script.slice(start, end).trim();
    if (stripLeadingComments(text)) statements.push(text);
  };
  while (i < n) {
    const c = script[i]!;
    const next = script[i + 1];
    if (c === "-" && next === "-") {
      const eol = script.indexOf("\n", i);
      i = eol === -1 ? n : eol + 1;
    } else if (c === "/" && next === "*") {
      i = skipBlockComment(script, i);
    } else if (c === "'") {
      // E'…' strings take backslash escapes; standard strings only ''.
      const escaped = i > 0 && /[eE]/.test(script[i - 1]!) && !/[A-Za-z0-9_]/.test(script[i - 2] ?? " ");
      i = skipQuoted(script, i, "'", escaped);
    } else if (c === '"') {
      i = skipQuoted(script, i, '"', false);
    } else if (c === "$") {
      const tag = /^\$([A-Za-z_][A-Za-z0-9_]*)?\$/.exec(script.slice(i));
      // `$1` (a parameter) or `a$b` (part of an identifier) is not a dollar quote.
      if (tag && !/[A-Za-z0-9_]/.test(script[i - 1] ?? " ")) {
        const end = script.indexOf(tag[0], i + tag[0].length);
        i = end === -1 ? n : end + tag[0].length;
      } else {
        i++;
      }
    } else if (c === ";") {
      push(i);
      start = i + 1;
      i++;
    } else {
      i++;
    }
  }
  push(n);
  return statements;
}

function skipBlockComment(script: string, at: number): number {
  let depth = 0;
  let i = at;
  while (i < script.length) {
    if (script.startsWith("/*", i)) {
      depth++;
      i += 2;
    } else if (script.startsWith("*/", i)) {
      depth--;
      i += 2;
      if (depth === 0) return i;
    } else {
      i++;
    }
  }
  return i;
}

function skipQuoted(script: string, at: number, quote: string, backslashEscapes: boolean): number {
  let i = at + 1;
  while (i < script.length) {
    const c = script[i]!;
    if (backslashEscapes && c === "\\") {
      i += 2;
    } else if (c === quote) {
      if (script[i + 1] === quote) i += 2;
      else return i + 1;
    } else {
      i++;
    }
  }
  return i;
}

/** The statement without the comments and blank lines in front of it ("" for a comment-only piece). */
export function stripLeadingComments(statement: string): string {
  let text = statement.trimStart();
  for (;;) {
    if (text.startsWith("--")) {
      const eol = text.indexOf("\n");
      text = eol === -1 ? "" : text.slice(eol + 1).trimStart();
    } else if (text.startsWith("/*")) {
      text = text.slice(skipBlockComment(text, 0)).trimStart();
    } else {
      return text;
    }
  }
}

/**
 * Whether a top-level statement starts, ends or splits a transaction. Inside
 * the applier's own transaction a COMMIT would commit the half-applied
 * migration without its record, so such a migration is refused.
 */
export function isTransactionControl(statement: string): boolean {
  return /^(BEGIN|START\s+TRANSACTION|COMMIT|END|ROLLBACK|ABORT|SAVEPOINT|RELEASE|PREPARE\s+TRANSACTION)\b/i.test(
    stripLeadingComments(statement),
  );
}

/**
 * Whether the statement creates or adds a named object and fails when that
 * object already exists: the statements that tell, on a re-run, whether a
 * migration had been applied (lib/db/migrate.ts, unfinished rows). `IF NOT
 * EXISTS` and `OR REPLACE` forms succeed either way and tell nothing.
 */
export function isStrictCreate(statement: string): boolean {
  const text = stripLeadingComments(statement).replace(/\s+/g, " ");
  if (/\bIF NOT EXISTS\b/i.test(text) || /^CREATE OR REPLACE\b/i.test(text)) return false;
  return (
    /^CREATE (UNIQUE )?(INDEX|TABLE|TYPE|SEQUENCE|SCHEMA|VIEW|MATERIALIZED VIEW|FUNCTION|PROCEDURE|TRIGGER|CONSTRAINT TRIGGER|DOMAIN|EXTENSION|RULE|POLICY)\b/i.test(
      text,
    ) ||
    /^ALTER TABLE .*\bADD (COLUMN |CONSTRAINT )?/i.test(text) ||
    /^ALTER TYPE .*\bADD VALUE\b/i.test(text)
  );
}

/** The marker of a migration that cannot run inside a transaction (see lib/db/migrate.ts). */
export const NON_TRANSACTIONAL_MARKER = "-- verity: non-transactional";

/** Whether the script's header (the comment lines before its first statement) carries NON_TRANSACTIONAL_MARKER. */
export function isMarkedNonTransactional(script: string): boolean {
  for (const line of script.split(/\r?\n/)) {
    const trimmed = line.trim();
    if (trimmed === "") continue;
    if (!trimmed.startsWith("--")) return false;
    if (trimmed.replace(/\s+/g, " ").toLowerCase() === NON_TRANSACTIONAL_MARKER) return true;
  }
  return false;
}
