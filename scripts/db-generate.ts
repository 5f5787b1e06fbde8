/**
 * `prisma generate`, runnable offline. The Prisma CLI insists on locating its
 * native schema-engine binary before generating, and downloading it fails on
 * machines without internet. Generation itself runs in WebAssembly and never
 * executes that binary, so any existing file satisfies the check.
 */
import { spawnSync } from "node:child_process";

const result = spawnSync("npx", ["prisma", "generate"], {
  stdio: "inherit",
  env: { ...process.env, PRISMA_SCHEMA_ENGINE_BINARY: process.env.PRISMA_SCHEMA_ENGINE_BINARY ?? process.execPath },
});
process.exit(result.status ?? 1);
