/**
 * The architecture check (`npm run check:architecture`, part of `npm test`):
 * imports flow one way and never in a circle.
 */
module.exports = {
  forbidden: [
    {
      name: "lib-knows-no-adapter",
      comment: "lib/ holds the domain and its services; Next.js routes, pages and React components (app/, components/) build on it, never the other way.",
      severity: "error",
      from: { path: "^lib/" },
      to: { path: "^(app|components)/" },
    },
    {
      name: "no-test-code-in-the-product",
      comment: "Tests, browser tests and benchmarks use the product; the product never imports them.",
      severity: "error",
      from: { path: "^(lib|app|components|scripts)/", pathNot: "\\.test\\.tsx?$" },
      to: { path: "^(tests|e2e|bench)/" },
    },
    {
      name: "connectors-below-the-engine",
      comment: "Connectors talk to providers and know the tools' request shapes (lib/engine/tools.ts), nothing of the engine's use cases or stores: the engine uses them, not the other way.",
      severity: "error",
      from: { path: "^lib/connectors/" },
      to: { path: "^lib/engine/", pathNot: "^lib/engine/tools\\.ts$" },
    },
    {
      name: "sdk-is-a-client",
      comment: "The SDK runs in agent processes: it speaks HTTP and may share the API's types, never the server's code.",
      severity: "error",
      from: { path: "^lib/sdk/" },
      to: { path: "^lib/(db|engine|auth|http|console|api|db\\.ts|env\\.ts)", dependencyTypesNot: ["type-only"] },
    },
    {
      name: "no-cycles",
      comment: "A module may not reach itself through its imports: a cycle ties two owners into one and makes load order matter.",
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
    enhancedResolveOptions: { exportsFields: ["exports"], conditionNames: ["import", "require", "node", "default", "types"], extensions: [".ts", ".tsx", ".js", ".mjs", ".cjs", ".json"] },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
