/**
 * The architecture check (`npm run check:architecture`, part of `npm test`):
 * imports flow one way, down the layers of lib/, and never in a circle.
 *
 *   lib/core → lib/config → lib/db → lib/model → lib/stores → lib/connectors
 *   → lib/use-cases → lib/jobs → lib/adapters → app/, components/
 *   programs/, sdk/, scripts/ stand outside: they use lib, lib never uses them.
 *
 * docs/architecture.md explains each layer.
 */
const fs = require("node:fs");
const path = require("node:path");

const layers = ["core", "config", "db", "model", "stores", "connectors", "use-cases", "jobs", "adapters"];

/** Every layer may import the layers listed before it, never one after. */
const layerRules = layers.slice(0, -1).map((layer, i) => ({
  name: `layer-order:${layer}`,
  comment: `lib/${layer}/ sits below ${layers
    .slice(i + 1)
    .map((l) => `lib/${l}/`)
    .join(", ")}: it may not import them.`,
  severity: "error",
  from: { path: `^lib/${layer}/` },
  to: { path: `^lib/(${layers.slice(i + 1).join("|")})/` },
}));

/** The files that start with "use client": they run in the browser. */
function clientModules() {
  const found = [];
  const walk = (dir) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (/\.tsx?$/.test(entry.name) && /^\s*(["'])use client\1/.test(fs.readFileSync(full, "utf8")))
        found.push(full.split(path.sep).join("/"));
    }
  };
  for (const dir of ["app", "components", "lib"]) if (fs.existsSync(dir)) walk(dir);
  return found;
}
const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
const clientPaths = clientModules();

module.exports = {
  forbidden: [
    ...layerRules,
    {
      name: "lib-knows-no-adapter",
      comment:
        "lib/ holds the domain and its services; Next.js routes, pages and React components (app/, components/) build on it, never the other way.",
      severity: "error",
      from: { path: "^lib/" },
      to: { path: "^(app|components)/" },
    },
    {
      name: "programs-stand-outside",
      comment:
        "The sandbox, the demo, the seed, the refund agent and the SDK are programs and clients built on Verity: nothing in the product imports them.",
      severity: "error",
      from: { path: "^(lib|app|components)/" },
      to: { path: "^(programs|sdk)/" },
    },
    {
      name: "model-is-pure",
      comment:
        "lib/model/ holds rules as plain functions over values: no database client, no queries (Prisma's generated enums and types are values, not queries).",
      severity: "error",
      from: { path: "^lib/model/" },
      to: { path: "^lib/db/|^lib/generated/prisma/client", dependencyTypesNot: ["type-only"] },
    },
    {
      name: "connectors-talk-to-providers",
      comment:
        "Connectors speak to providers and know the tools' request shapes (lib/model); they never touch Verity's database: the use cases record what a connector answered.",
      severity: "error",
      from: { path: "^lib/connectors/" },
      to: { path: "^lib/(db|stores)/" },
    },
    {
      name: "no-test-code-in-the-product",
      comment: "Tests, browser tests and benchmarks use the product; the product never imports them.",
      severity: "error",
      from: { path: "^(lib|app|components|scripts|programs|sdk)/", pathNot: "\\.test\\.tsx?$" },
      to: { path: "^(tests|e2e|bench)/" },
    },
    {
      name: "sdk-is-a-client",
      comment:
        "The SDK runs in agent processes: it speaks HTTP and may share the API's types and lib/core's plain helpers, never the server's code.",
      severity: "error",
      from: { path: "^sdk/" },
      to: { path: "^lib/", pathNot: "^lib/core/", dependencyTypesNot: ["type-only"] },
    },
    {
      name: "client-modules-import-servers-as-types",
      comment:
        'A "use client" module is bundled for the browser: it may import server modules (database, stores, use cases, jobs, configuration, the HTTP and auth adapters) only as types. Server actions are called through app/**/actions.ts, which Next turns into references.',
      severity: "error",
      from: { path: clientPaths.length ? `^(${clientPaths.map(escape).join("|")})$` : "^$" },
      to: {
        path: "^lib/(config|db|stores|connectors|use-cases|jobs)/|^lib/adapters/(auth|api|http|openapi|actions)/|^lib/generated/prisma/client",
        dependencyTypesNot: ["type-only"],
      },
    },
    {
      name: "no-cycles",
      comment:
        "A module may not reach itself through its imports: a cycle ties two owners into one and makes load order matter.",
      severity: "error",
      from: {},
      to: { circular: true, viaOnly: { dependencyTypesNot: ["type-only"] } },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "^(node_modules|lib/generated|\\.next|\\.data)" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default", "types"],
      extensions: [".ts", ".tsx", ".js", ".mjs", ".cjs", ".json"],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
