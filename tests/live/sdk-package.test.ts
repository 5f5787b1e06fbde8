import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createRequire } from "node:module";

/**
 * What a user does: `npm pack` the SDK (npm run sdk:pack), install the
 * tarball with one framework into a new project folder, type-check an
 * example against the package's declarations, and run it against a live
 * Verity. The folder sees nothing of this repository but the tarball.
 */
const root = path.resolve(import.meta.dirname, "../..");
const versions = (createRequire(import.meta.url)("../../package.json") as { devDependencies: Record<string, string> })
  .devDependencies;
const server = inject("liveServers").find((s) => s.name === "embedded")!;
let project: string;

function sh(command: string, args: string[], cwd: string, env: Record<string, string> = {}) {
  const result = spawnSync(command, args, {
    cwd,
    env: { ...process.env, ...env },
    encoding: "utf8",
    timeout: 600_000,
  });
  return { status: result.status, output: `${result.stdout}\n${result.stderr}` };
}

describe("the packed SDK, from a clean folder", () => {
  beforeAll(() => {
    const packed = sh("npm", ["run", "-s", "sdk:pack"], root);
    expect(packed.status, packed.output).toBe(0);
    const tarball = path.join(root, ".data/sdk-package/verity-sdk-0.1.0.tgz");
    project = mkdtempSync(path.join(tmpdir(), "verity-sdk-user-"));
    writeFileSync(
      path.join(project, "package.json"),
      JSON.stringify({ name: "refund-agent", private: true, type: "module" }),
    );
    writeFileSync(
      path.join(project, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          target: "ES2022",
          module: "esnext",
          moduleResolution: "bundler",
          strict: true,
          noEmit: true,
          skipLibCheck: true,
          lib: ["ES2023", "DOM"],
          types: ["node"],
        },
        include: ["**/*.ts"],
      }),
    );
    // The package and one framework, from npm's cache where it has them.
    const installed = sh(
      "npm",
      [
        "install",
        "--prefer-offline",
        "--no-audit",
        "--no-fund",
        "--ignore-scripts",
        tarball,
        `@langchain/langgraph@${versions["@langchain/langgraph"]}`,
        `@langchain/core@${versions["@langchain/core"]}`,
        `tsx@${versions.tsx}`,
        `typescript@${versions.typescript}`,
        // A Node project's own: the example reads process.env.
        `@types/node@${versions["@types/node"]}`,
      ],
      project,
    );
    expect(installed.status, installed.output).toBe(0);
    for (const folder of ["langgraph-refund-agent", "shared"])
      cpSync(path.join(root, "examples", folder), path.join(project, folder), { recursive: true });
  }, 900_000);

  afterAll(() => {
    if (project) rmSync(project, { recursive: true, force: true });
  });

  it("holds no server code: only the client's modules and their declarations", () => {
    const dist = readdirSync(path.join(project, "node_modules/@verity/sdk/dist"));
    expect(dist).toEqual(expect.arrayContaining(["index.js", "index.d.ts", "langgraph.js", "langgraph.d.ts"]));
    const grep = sh("grep", ["-rliE", "prisma|pglite|next/server", "node_modules/@verity/sdk/dist"], project);
    expect(grep.output.trim()).toBe("");
  });

  it("type-checks the LangGraph example against the package's declarations", () => {
    const checked = sh("npx", ["tsc", "-p", "."], project);
    expect(checked.status, checked.output).toBe(0);
  });

  it("runs the LangGraph refund agent against a live Verity: one refund", () => {
    const run = sh("npx", ["tsx", "langgraph-refund-agent/main.ts"], project, {
      VERITY_URL: server.baseUrl,
      VERITY_TOKEN: server.token,
      SANDBOX_URL: server.sandboxUrl,
      ORDER_ID: `pkg-${Date.now()}`,
    });
    expect(run.status, run.output).toBe(0);
    expect(run.output).toMatch(/succeeded/);
  });
});
