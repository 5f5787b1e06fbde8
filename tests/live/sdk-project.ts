import { spawn } from "node:child_process";
import { cpSync, mkdtempSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";

/**
 * What a user does before running anything: `npm pack` the SDK (npm run
 * sdk:pack), and install the tarball with one framework into a new project
 * folder that sees nothing of this repository. Made by the live project's
 * set-up (tests/live/global-setup.ts) while the servers start, since it
 * needs no server and was minutes of the stage on its own;
 * tests/live/sdk-package.test.ts checks each step's exit status and then
 * uses the folder.
 */
export interface SdkProject {
  folder: string;
  steps: Array<{ step: string; status: number | null; output: string }>;
}

const root = path.resolve(import.meta.dirname, "../..");

function sh(command: string, args: string[], cwd: string): Promise<{ status: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd, env: process.env, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (d: Buffer) => (output += d.toString()));
    child.stderr.on("data", (d: Buffer) => (output += d.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), 600_000);
    child.once("error", (error) => {
      clearTimeout(timer);
      resolve({ status: null, output: `${output}\n${error.message}` });
    });
    child.once("close", (status) => {
      clearTimeout(timer);
      resolve({ status, output });
    });
  });
}

export async function prepareSdkProject(): Promise<SdkProject> {
  const versions = (createRequire(import.meta.url)("../../package.json") as { devDependencies: Record<string, string> })
    .devDependencies;
  const folder = mkdtempSync(path.join(tmpdir(), "verity-sdk-user-"));
  const steps: SdkProject["steps"] = [];
  const packed = await sh("npm", ["run", "-s", "sdk:pack"], root);
  steps.push({ step: "npm run sdk:pack", ...packed });
  if (packed.status !== 0) return { folder, steps };
  writeFileSync(
    path.join(folder, "package.json"),
    JSON.stringify({ name: "refund-agent", private: true, type: "module" }),
  );
  writeFileSync(
    path.join(folder, "tsconfig.json"),
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
  const installed = await sh(
    "npm",
    [
      "install",
      "--prefer-offline",
      "--no-audit",
      "--no-fund",
      "--ignore-scripts",
      path.join(root, ".data/sdk-package/verity-sdk-0.1.0.tgz"),
      `@langchain/langgraph@${versions["@langchain/langgraph"]}`,
      `@langchain/core@${versions["@langchain/core"]}`,
      `tsx@${versions.tsx}`,
      `typescript@${versions.typescript}`,
      // A Node project's own: the example reads process.env.
      `@types/node@${versions["@types/node"]}`,
    ],
    folder,
  );
  steps.push({ step: "npm install", ...installed });
  for (const example of ["langgraph-refund-agent", "shared"])
    cpSync(path.join(root, "examples", example), path.join(folder, example), { recursive: true });
  return { folder, steps };
}
