import { defineConfig } from "tsup";

/**
 * The SDK as an installable package (npm run sdk:pack): the client side
 * only, from ../../sdk, with lib/core's few helpers bundled in and the
 * API's types inlined, so no server code ships. Each framework is its own
 * entry point and a peer dependency: a user of one framework installs that
 * one alone.
 */
export default defineConfig({
  entry: {
    index: "../../sdk/index.ts",
    langgraph: "../../sdk/langgraph/index.ts",
    "ai-sdk": "../../sdk/frameworks/ai-sdk.ts",
    langchain: "../../sdk/frameworks/langchain.ts",
    "openai-agents": "../../sdk/frameworks/openai-agents.ts",
  },
  format: ["esm"],
  target: "node20",
  platform: "node",
  outDir: "dist",
  clean: true,
  dts: { resolve: [/^@\//] },
  tsconfig: "tsconfig.json",
  external: [
    /^@langchain\//,
    /^ai$/,
    /^ai\//,
    /^langchain$/,
    /^langchain\//,
    /^@openai\//,
    "zod",
    "@opentelemetry/api",
  ],
  splitting: true,
  treeshake: true,
});
