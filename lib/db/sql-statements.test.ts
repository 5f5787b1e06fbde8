import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { checksumOf, readMigrations, scriptMatchesChecksum } from "@/lib/db/migrations";
import {
  isMarkedNonTransactional,
  isStrictCreate,
  isTransactionControl,
  splitSqlStatements,
} from "@/lib/db/sql-statements";

describe("splitSqlStatements", () => {
  it("splits at top-level semicolons only: quotes, dollar quotes and comments hide theirs", () => {
    const script = [
      "-- a comment; with a semicolon",
      "CREATE TABLE \"a;b\" (x text DEFAULT 'it''s; fine');",
      "/* block ; /* nested ; */ still comment ; */",
      "CREATE FUNCTION f() RETURNS trigger AS $$ BEGIN RETURN NEW; END; $$ LANGUAGE plpgsql;",
      "CREATE FUNCTION g() RETURNS int AS $body$ SELECT 1; $body$ LANGUAGE sql;",
      "SELECT E'back\\'slash;', $1;",
      "-- only a comment at the end",
    ].join("\n");
    const statements = splitSqlStatements(script);
    expect(statements).toHaveLength(4);
    expect(statements[0]).toMatch(
      /^-- a comment; with a semicolon\nCREATE TABLE "a;b" \(x text DEFAULT 'it''s; fine'\)$/,
    );
    expect(statements[1]).toMatch(/\$\$ BEGIN RETURN NEW; END; \$\$ LANGUAGE plpgsql$/);
    expect(statements[2]).toMatch(/\$body\$ SELECT 1; \$body\$ LANGUAGE sql$/);
    expect(statements[3]).toBe("SELECT E'back\\'slash;', $1");
  });

  it("finds no transaction control in any migration of prisma/migrations (the audit log's function bodies say BEGIN inside $$)", () => {
    const migrations = readMigrations();
    expect(migrations.length).toBeGreaterThan(0);
    for (const m of migrations) {
      const statements = splitSqlStatements(m.script);
      expect(statements.length, m.name).toBeGreaterThan(0);
      expect(statements.filter(isTransactionControl), m.name).toEqual([]);
    }
  });
});

describe("isTransactionControl", () => {
  it("recognises BEGIN, COMMIT and their relatives at the top level, after comments too", () => {
    for (const s of [
      "BEGIN",
      "begin",
      "START TRANSACTION",
      "COMMIT",
      "END",
      "ROLLBACK",
      "SAVEPOINT a",
      "-- x\nCOMMIT",
      "/* y */ BEGIN",
    ])
      expect(isTransactionControl(s), s).toBe(true);
    for (const s of ["CREATE TABLE begin_x (id int)", "SELECT 'COMMIT'", "ALTER TABLE t ADD COLUMN ending int"])
      expect(isTransactionControl(s), s).toBe(false);
  });
});

describe("isStrictCreate", () => {
  it("is true for statements that fail when their object exists, false for IF NOT EXISTS, OR REPLACE and the rest", () => {
    for (const s of [
      'CREATE TABLE "t" (id int)',
      'CREATE UNIQUE INDEX "i" ON "t"("id")',
      "CREATE TYPE \"R\" AS ENUM ('a')",
      'ALTER TABLE "t" ADD COLUMN     "x" INTEGER',
      'ALTER TABLE "t" ADD CONSTRAINT "c" FOREIGN KEY ("x") REFERENCES "u"("id")',
      "ALTER TYPE \"R\" ADD VALUE 'b'",
      "CREATE TRIGGER tr BEFORE INSERT ON t FOR EACH ROW EXECUTE FUNCTION f()",
    ])
      expect(isStrictCreate(s), s).toBe(true);
    for (const s of [
      "CREATE TABLE IF NOT EXISTS t (id int)",
      "CREATE OR REPLACE FUNCTION f() RETURNS int AS $$ SELECT 1 $$ LANGUAGE sql",
      'ALTER TABLE "t" ADD COLUMN IF NOT EXISTS "x" int',
      'DROP INDEX "i"',
      'UPDATE "leases" SET "lease_id" = 1 WHERE "lease_id" IS NULL',
      'ALTER TABLE "t" ALTER COLUMN "x" SET NOT NULL',
    ])
      expect(isStrictCreate(s), s).toBe(false);
  });
});

describe("isMarkedNonTransactional", () => {
  it("reads the marker from the header comments only", () => {
    expect(isMarkedNonTransactional("-- verity: non-transactional\nCREATE INDEX CONCURRENTLY x ON t (a);")).toBe(true);
    expect(
      isMarkedNonTransactional(
        "\n-- Build the index without locking writes.\n--   Verity:  NON-TRANSACTIONAL\nCREATE INDEX CONCURRENTLY x ON t (a);",
      ),
    ).toBe(true);
    expect(isMarkedNonTransactional("CREATE TABLE t (a int);\n-- verity: non-transactional\n")).toBe(false);
    expect(isMarkedNonTransactional("-- verity: non-transactional, not really\nCREATE TABLE t (a int);")).toBe(false);
  });
});

describe("checksums, as Prisma computes and compares them", () => {
  it("is the sha256 hex of the file's bytes", () => {
    expect(checksumOf("hello")).toBe("2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824");
  });

  it("matches across line endings and the unpadded form an early engine wrote, and nothing else", () => {
    const script = "CREATE TABLE a (id int);\nCREATE TABLE b (id int);\n";
    const crlf = script.replaceAll("\n", "\r\n");
    expect(scriptMatchesChecksum(script, checksumOf(script))).toBe(true);
    expect(scriptMatchesChecksum(crlf, checksumOf(script))).toBe(true);
    expect(scriptMatchesChecksum(script, checksumOf(crlf))).toBe(true);
    const unpadded = [...createHash("sha256").update(script).digest()].map((b) => b.toString(16)).join("");
    // Only a hash with a byte below 0x10 has an unpadded form that differs; this script's does.
    expect(unpadded.length).toBeLessThan(64);
    expect(scriptMatchesChecksum(script, unpadded)).toBe(true);
    expect(scriptMatchesChecksum(`${script} `, checksumOf(script))).toBe(false);
    expect(scriptMatchesChecksum(script, checksumOf("something else"))).toBe(false);
  });
});
