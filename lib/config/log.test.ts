import { describe, expect, it } from "vitest";
import { parseEnvValues } from "@/lib/config/env";
import {
  childLogger,
  createLogger,
  lineLogger,
  REDACTED,
  redactText,
  redactValue,
  renderLine,
  type LogFormat,
} from "@/lib/config/log";
import { isSecretName } from "@/lib/core/secret-names";
import type { LogLevel } from "@/lib/config/env";

function capture(level: LogLevel, format: LogFormat = "json") {
  const out: string[] = [];
  const err: string[] = [];
  const log = createLogger({
    level,
    format,
    out: { write: (l) => void out.push(l) },
    err: { write: (l) => void err.push(l) },
  });
  const records = (lines: string[]) => lines.map((l) => JSON.parse(l) as Record<string, unknown>);
  return { log, out, err, outRecords: () => records(out), errRecords: () => records(err) };
}

describe("levels", () => {
  it("info, the default, drops debug and trace; warn and above go to stderr, the rest to stdout", () => {
    const c = capture("info");
    c.log.trace("t");
    c.log.debug("d");
    c.log.info("i");
    c.log.warn("w");
    c.log.error("e");
    c.log.fatal("f");
    expect(c.outRecords().map((r) => [r.level, r.msg])).toEqual([["info", "i"]]);
    expect(c.errRecords().map((r) => [r.level, r.msg])).toEqual([
      ["warn", "w"],
      ["error", "e"],
      ["fatal", "f"],
    ]);
  });

  it("debug lets debug through, warn keeps only warn and above, silent writes nothing", () => {
    const debug = capture("debug");
    debug.log.trace("t");
    debug.log.debug("d");
    expect(debug.outRecords().map((r) => r.msg)).toEqual(["d"]);

    const warn = capture("warn");
    warn.log.info("i");
    warn.log.child({ component: "sandbox" }).info("child info");
    warn.log.warn("w");
    expect(warn.out).toEqual([]);
    expect(warn.errRecords().map((r) => r.msg)).toEqual(["w"]);

    const silent = capture("silent");
    silent.log.fatal("f");
    expect([...silent.out, ...silent.err]).toEqual([]);
  });

  it("lineLogger filters by its level and writes one plain line per record", () => {
    const lines: string[] = [];
    const log = lineLogger((l) => lines.push(l), { level: "info" });
    log.debug("GET /v1/refunds → 200");
    log.info({ executions: ["exe_1"] }, "reconciled 1 execution(s): 1 reconciled_succeeded");
    log.warn("slow provider");
    expect(lines).toEqual([
      'reconciled 1 execution(s): 1 reconciled_succeeded executions=["exe_1"]',
      "warn: slow provider",
    ]);
  });

  it("VERITY_LOG_LEVEL is validated with the rest of the configuration, info by default", () => {
    expect(parseEnvValues({}).data?.VERITY_LOG_LEVEL).toBe("info");
    expect(parseEnvValues({ VERITY_LOG_LEVEL: "" }).data?.VERITY_LOG_LEVEL).toBe("info");
    expect(parseEnvValues({ VERITY_LOG_LEVEL: "debug" }).data?.VERITY_LOG_LEVEL).toBe("debug");
    const bad = parseEnvValues({ VERITY_LOG_LEVEL: "verbose" });
    expect(bad.success).toBe(false);
    expect(bad.error?.issues[0]?.path).toEqual(["VERITY_LOG_LEVEL"]);
  });
});

describe("format", () => {
  it("JSON lines carry an ISO time, the level's name, the component and the fields", () => {
    const c = capture("info");
    c.log.child({ component: "background" }).info({ delivered: 2 }, "delivered 2 outbox message(s)");
    const [record] = c.outRecords();
    expect(record).toMatchObject({
      level: "info",
      component: "background",
      delivered: 2,
      msg: "delivered 2 outbox message(s)",
    });
    expect(record?.time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(c.out[0]?.endsWith("\n")).toBe(true);
  });

  it("a terminal gets one readable line: clock, level, component, message, fields", () => {
    const c = capture("info", "pretty");
    c.log
      .child({ component: "sandbox" })
      .info({ status: 200, path: "/v1/refunds?idempotency_key=vrt:t:c" }, "GET → 200");
    expect(c.out).toHaveLength(1);
    expect(c.out[0]).toMatch(
      /^\d\d:\d\d:\d\d\.\d{3} INFO  sandbox: GET → 200 status=200 path=\/v1\/refunds\?idempotency_key=vrt:t:c\n$/,
    );
  });

  it("an error on a terminal shows its type and message, and its stack below", () => {
    const line = renderLine(
      {
        level: "error",
        time: new Date().toISOString(),
        component: "background",
        msg: "outbox failed",
        err: { type: "TypeError", message: "boom", stack: "TypeError: boom\n    at f (x.ts:1:1)" },
      },
      { time: true },
    );
    expect(line).toMatch(/ERROR background: outbox failed err="TypeError: boom"\n {4}at f \(x\.ts:1:1\)$/);
  });
});

describe("redaction", () => {
  const token = "vrt_demo_refund_bot_token_for_local_use_only";

  it("censors members named like secrets at any depth, and keeps ids and keys that are not secrets", () => {
    const c = capture("info");
    c.log.info(
      {
        request: {
          headers: {
            Authorization: `Bearer ${token}`,
            cookie: "next-auth.session-token=abc.def",
            "sandbox-signature": "t=1,v1=ab",
          },
        },
        user: { username: "operator", password: "operator-demo", passwordHash: "scrypt$…" },
        webhookSecret: "s".repeat(32),
        signingKey: "k".repeat(32),
        VERITY_CHECKPOINT_KEYS: `local-1=${"x".repeat(32)}`,
        api_token: { tokenHash: "h" },
        idempotency_key: "vrt:task_1:refund",
        fencing_token: 7,
        tokenPrefix: "vrt_demo",
      },
      "request",
    );
    const [record] = c.outRecords();
    expect(record).toMatchObject({
      request: { headers: { Authorization: REDACTED, cookie: REDACTED, "sandbox-signature": REDACTED } },
      user: { username: "operator", password: REDACTED, passwordHash: REDACTED },
      webhookSecret: REDACTED,
      signingKey: REDACTED,
      VERITY_CHECKPOINT_KEYS: REDACTED,
      api_token: REDACTED,
      idempotency_key: "vrt:task_1:refund",
      fencing_token: 7,
      tokenPrefix: "vrt_demo",
    });
    expect(c.out[0]).not.toContain("operator-demo");
    expect(c.out[0]).not.toContain(token);
  });

  it("replaces credentials inside the message, its arguments, string fields and child bindings", () => {
    const c = capture("info");
    const child = childLogger("api", { upstream: "postgresql://verity:hunter2@db.internal:5432/verity" }, c.log);
    child.info(
      { note: `retrying with Authorization: Bearer ${token}` },
      "token %s refused at %s",
      token,
      "https://u:p4ss@example.test/hook?api_key=abc123&x=1",
    );
    const line = c.out[0] ?? "";
    for (const secret of [token, "hunter2", "p4ss", "abc123"]) expect(line).not.toContain(secret);
    const record = JSON.parse(line) as Record<string, string>;
    expect(record.msg).toBe(
      `token vrt_${REDACTED} refused at https://u:${REDACTED}@example.test/hook?api_key=${REDACTED}&x=1`,
    );
    expect(record.upstream).toBe(`postgresql://verity:${REDACTED}@db.internal:5432/verity`);
    expect(record.note).toBe(`retrying with Authorization: ${REDACTED}`);
  });

  it("redacts an error's message, stack, cause and own members, whether logged as err or under another name", () => {
    const c = capture("error");
    const cause = new Error(`upstream said: password=${"p".repeat(12)}`);
    const error = Object.assign(new Error(`request with Bearer ${token} failed`, { cause }), {
      code: "E_PROVIDER",
      secret: "shh",
    });
    c.log.error(error);
    c.log.error({ error }, "second");
    const [first, second] = c.errRecords() as Array<{
      msg: string;
      err?: Record<string, unknown>;
      error?: Record<string, unknown>;
    }>;
    expect(first?.msg).toBe(`request with Bearer ${REDACTED} failed`);
    for (const e of [first?.err, second?.error]) {
      expect(e).toMatchObject({ type: "Error", code: "E_PROVIDER", secret: REDACTED });
      expect(String(e?.message)).toContain(`Bearer ${REDACTED}`);
      expect(String(e?.message)).toContain(`password=${REDACTED}`);
      expect(String(e?.stack)).toContain("at ");
    }
    for (const line of c.err) {
      expect(line).not.toContain(token);
      expect(line).not.toContain("pppppppppppp");
      expect(line).not.toContain("shh");
    }
  });

  it("text patterns: each credential shape, and ordinary text left alone", () => {
    const cases: Array<[string, string]> = [
      ["Authorization: Basic dXNlcjpwYXNz", `Authorization: ${REDACTED}`],
      ["sent Bearer abc.def-ghi_jkl", `sent Bearer ${REDACTED}`],
      ["Cookie: next-auth.session-token=x; csrf=y", `Cookie: ${REDACTED}`],
      ["signature t=1764000000,v1=0123456789abcdef0123 checked", `signature ${REDACTED} checked`],
      ['{"client_secret":"abc","id":"x"}', `{"client_secret":${REDACTED},"id":"x"}`],
      ["VERITY_SANDBOX_WEBHOOK_SECRET=abcdefghijklmnop", `VERITY_SANDBOX_WEBHOOK_SECRET=${REDACTED}`],
      ["jwt eyJhbGciOi.eyJzdWIiOi.c2lnbmF0dXJl", `jwt ${REDACTED}`],
      ["-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----", REDACTED],
    ];
    for (const [text, expected] of cases) expect(redactText(text), text).toBe(expected);
    const ordinary =
      "GET /v1/refunds?idempotency_key=vrt:task_1:refund → 200 [drop_response] 12 ms; fencing_token=3; lease token 4 is stale";
    expect(redactText(ordinary)).toBe(ordinary);
  });

  it("names: what counts as a secret", () => {
    for (const name of [
      "Authorization",
      "set-cookie",
      "password",
      "newPassword",
      "NEXTAUTH_SECRET",
      "webhook_secret",
      "Sandbox-Signature",
      "api_key",
      "signingKey",
      "privateKey",
      "token",
      "accessToken",
      "next-auth.session-token",
      "tokenHash",
    ]) {
      expect(isSecretName(name), name).toBe(true);
    }
    for (const name of [
      "idempotency_key",
      "idempotencyKey",
      "fencing_token",
      "fencingToken",
      "tokenPrefix",
      "key",
      "keyId",
      "username",
      "execution_id",
    ]) {
      expect(isSecretName(name), name).toBe(false);
    }
  });

  it("survives cycles and leaves class instances to their own JSON", () => {
    const a: Record<string, unknown> = { name: "a" };
    a.self = a;
    const when = new Date("2026-01-01T00:00:00.000Z");
    expect(redactValue({ a, when })).toEqual({ a: { name: "a", self: "[circular]" }, when });
  });
});
