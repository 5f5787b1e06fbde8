import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, inject, it } from "vitest";

/**
 * What a user does: `npm pack` the SDK (npm run sdk:pack), install the
 * tarball with one framework into a new project folder, type-check an
 * example against the package's declarations, and run it against a live
 * Verity. The folder sees nothing of this repository but the tarball.
 */
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
    // Packed and installed by the live set-up while the servers started (tests/live/sdk-project.ts).
    const prepared = inject("sdkProject");
    for (const { step, status, output } of prepared.steps) expect(status, `${step}:\n${output}`).toBe(0);
    expect(prepared.steps.map((s) => s.step)).toEqual(["npm run sdk:pack", "npm install"]);
    project = prepared.folder;
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
