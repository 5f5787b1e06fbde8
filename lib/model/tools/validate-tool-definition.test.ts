import { describe, expect, it } from "vitest";
import { builtInToolDefinitions } from "@/lib/model/tools/built-in-tools";
import { validateToolDefinition } from "@/lib/model/tools/validate-tool-definition";
import { requestProblems } from "@/lib/model/tools/request-schema";

const deploy = {
  name: "deploy.release",
  version: 1,
  description: "Release a build to an environment",
  irreversible: true,
  request_schema: {
    type: "object",
    additionalProperties: false,
    required: ["service", "build", "environment"],
    properties: {
      service: { type: "string", minLength: 1 },
      build: { type: "string", pattern: "^[0-9a-f]{7,40}$" },
      environment: { type: "string", enum: ["staging", "production"] },
    },
  },
  topic: "deploy",
  idempotency_window_seconds: 86_400,
  identity_fields: ["/service", "/build", "/environment"],
  max_attempts: 2,
  reconciliation: { method: "worker", deadline_seconds: 600 },
};

const payout = {
  ...deploy,
  name: "payouts.send",
  request_schema: {
    type: "object",
    required: ["amount_minor", "currency", "payee"],
    properties: {
      amount_minor: { type: "integer", minimum: 1 },
      currency: { type: "string" },
      payee: { type: "string" },
    },
  },
  amount: { amount_pointer: "/amount_minor", currency_pointer: "/currency" },
  identity_fields: ["/amount_minor", "/payee"],
  reconciliation: { method: "http", url: "https://payouts.example/verity/lookup" },
};

const known = (name: string) => ["deploy.rollback", "payments.refund"].includes(name);

describe("validateToolDefinition", () => {
  it.each([
    ["a worker-reconciled deploy", deploy],
    ["an http-reconciled payout with its amount", payout],
    [
      "a manual tool with a compensating tool",
      { ...deploy, reconciliation: { method: "manual" }, compensating_tool: "deploy.rollback" },
    ],
  ])("accepts %s", (_name, doc) => {
    const result = validateToolDefinition(doc, { toolExists: known });
    expect(result.ok ? [] : result.problems).toEqual([]);
  });

  it("accepts data classes for the request, the result and the evidence", () => {
    const doc = {
      ...deploy,
      data_classes: { request: { "/service": "internal" }, result: { "/url": "confidential" }, evidence: {} },
    };
    expect(validateToolDefinition(doc, { toolExists: known })).toMatchObject({ ok: true, definition: doc });
  });

  it("accepts the built-in definitions, which alone may use Verity's connectors", () => {
    for (const def of Object.values(builtInToolDefinitions)) {
      expect(validateToolDefinition(def, { builtIn: true }).ok).toBe(true);
      expect(validateToolDefinition(def)).toMatchObject({
        ok: false,
        problems: [{ path: "$.reconciliation.method" }],
      });
    }
  });

  const cases: Array<[string, unknown, string[]]> = [
    ["not an object", 7, ["$"]],
    ["a missing name and an unknown field", { ...deploy, name: undefined, colour: "red" }, ["$.name", "$.colour"]],
    ["a name outside the scope alphabet", { ...deploy, name: "Deploy Release" }, ["$.name"]],
    ["version 0", { ...deploy, version: 0 }, ["$.version"]],
    ["an irreversible given as a string", { ...deploy, irreversible: "yes" }, ["$.irreversible"]],
    ["a topic the instruction ledger would refuse", { ...deploy, topic: "Deploy!" }, ["$.topic"]],
    ["a window under a minute", { ...deploy, idempotency_window_seconds: 5 }, ["$.idempotency_window_seconds"]],
    ["eleven attempts", { ...deploy, max_attempts: 11 }, ["$.max_attempts"]],
    [
      "an unknown reconciliation method",
      { ...deploy, reconciliation: { method: "psychic" } },
      ["$.reconciliation.method"],
    ],
    ["an http lookup without a URL", { ...deploy, reconciliation: { method: "http" } }, ["$.reconciliation.url"]],
    [
      "an http lookup on ftp",
      { ...deploy, reconciliation: { method: "http", url: "ftp://x.example/l" } },
      ["$.reconciliation.url"],
    ],
    [
      "a worker deadline of a second",
      { ...deploy, reconciliation: { method: "worker", deadline_seconds: 1 } },
      ["$.reconciliation.deadline_seconds"],
    ],
    [
      "a schema with a misspelled keyword",
      { ...deploy, request_schema: { type: "object", properties: { n: { type: "integer", minimun: 1 } } } },
      ["$.request_schema"],
    ],
    [
      "a schema with a wrong type name",
      { ...deploy, request_schema: { type: "object", properties: { n: { type: "intger" } } } },
      ["$.request_schema.properties.n.type"],
    ],
    [
      "a schema that is not of an object",
      { ...deploy, irreversible: false, request_schema: { type: "string" }, identity_fields: [] },
      ["$.request_schema.type"],
    ],
    [
      "an identity field the schema lacks",
      { ...deploy, identity_fields: ["/service", "/region"] },
      ["$.identity_fields[1]"],
    ],
    ["an identity field that is not a pointer", { ...deploy, identity_fields: ["service"] }, ["$.identity_fields[0]"]],
    [
      "an unknown data class and a data-class key that is not a pointer",
      { ...deploy, data_classes: { request: { "/service": "secret" }, result: { build: "public" } } },
      ['$.data_classes.request["/service"]', '$.data_classes.result["build"]'],
    ],
    [
      "a data-class part that is not request, result or evidence",
      { ...deploy, data_classes: { response: { "/x": "public" } } },
      ["$.data_classes.response"],
    ],
    ["an identity field twice", { ...deploy, identity_fields: ["/service", "/service"] }, ["$.identity_fields[1]"]],
    ["an irreversible tool with no identity fields", { ...deploy, identity_fields: [] }, ["$.identity_fields"]],
    [
      "an amount the schema does not require",
      {
        ...payout,
        identity_fields: ["/payee"],
        request_schema: { ...payout.request_schema, required: ["currency", "payee"] },
      },
      ["$.amount.amount_pointer"],
    ],
    [
      "an amount that is a string",
      {
        ...payout,
        request_schema: {
          ...payout.request_schema,
          properties: { ...payout.request_schema.properties, amount_minor: { type: "string" } },
        },
      },
      ["$.amount.amount_pointer"],
    ],
    [
      "a currency pointer to nowhere",
      { ...payout, amount: { amount_pointer: "/amount_minor", currency_pointer: "/ccy" } },
      ["$.amount.currency_pointer"],
    ],
    ["a compensating tool nobody registered", { ...deploy, compensating_tool: "deploy.undo" }, ["$.compensating_tool"]],
    ["a tool compensating itself", { ...deploy, compensating_tool: "deploy.release" }, ["$.compensating_tool"]],
    [
      "a compensation request with no compensating tool",
      { ...deploy, compensation_request: { service: "/request/service" } },
      ["$.compensation_request"],
    ],
    [
      "a compensation request pointing outside the effect's request and result",
      { ...payout, compensating_tool: "payments.refund", compensation_request: { payee: "/payee" } },
      ["$.compensation_request.payee"],
    ],
    [
      "a compensation request reading a field the request schema does not declare",
      { ...payout, compensating_tool: "payments.refund", compensation_request: { payee: "/request/account" } },
      ["$.compensation_request.payee"],
    ],
  ];
  it.each(cases)("refuses %s, at its JSON path", (_name, doc, paths) => {
    const result = validateToolDefinition(doc, { toolExists: known });
    expect(result.ok).toBe(false);
    expect(result.ok ? [] : result.problems.map((p) => p.path).sort()).toEqual([...paths].sort());
  });

  it("names every problem at once", () => {
    const result = validateToolDefinition(
      { ...payout, version: -1, topic: "", identity_fields: ["/nope"], compensating_tool: "x.y" },
      { toolExists: known },
    );
    expect(result.ok ? [] : result.problems.map((p) => p.path).sort()).toEqual(["$.topic", "$.version"]);
    // Shape problems first; once the shape holds, the meaning is checked, all of it.
    const meaning = validateToolDefinition(
      { ...payout, identity_fields: ["/nope"], compensating_tool: "x.y" },
      { toolExists: known },
    );
    expect(meaning.ok ? [] : meaning.problems.map((p) => p.path).sort()).toEqual([
      "$.compensating_tool",
      "$.identity_fields[0]",
    ]);
  });
});

describe("requestProblems", () => {
  it("names each field of a request that does not fit its schema, nested ones by their dotted path", () => {
    const schema = {
      type: "object",
      additionalProperties: false,
      required: ["target", "build"],
      properties: {
        build: { type: "string" },
        target: { type: "object", required: ["env"], properties: { env: { type: "string", enum: ["staging"] } } },
      },
    };
    expect(requestProblems(schema, { target: { env: "staging" }, build: "abc" })).toEqual([]);
    expect(
      requestProblems(schema, { target: { env: "prod" }, extra: 1 })
        .map((p) => p.field)
        .sort(),
    ).toEqual(["build", "extra", "target.env"]);
  });
});
