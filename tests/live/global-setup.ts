import { rmSync } from "node:fs";
import path from "node:path";
import type { TestProject } from "vitest/node";
import { isConsoleBuildStale } from "@/scripts/console-build";
import { prepareSdkProject, type SdkProject } from "./sdk-project";
import { startLiveServer, type LiveServer } from "./servers";

declare module "vitest" {
  export interface ProvidedContext {
    /** The live servers of the framework suites, by database: base URL, sandbox URL and the demo agent's token. */
    liveServers: Array<{ name: LiveServer["name"]; baseUrl: string; sandboxUrl: string; token: string }>;
    /** The packed SDK installed into a clean project folder (tests/live/sdk-project.ts). */
    sdkProject: SdkProject;
  }
}

/**
 * Once per run of the live project: a server on each database. On a build
 * that is up to date (`npm test` runs this after the Playwright stage has
 * built) both start at once, their migrations and demo seeds side by side;
 * otherwise one after the other, so that only the first builds. Meanwhile
 * the SDK is packed and installed into a clean folder, which needs no server.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const log = (line: string) => console.log(line);
  const names: Array<LiveServer["name"]> = ["embedded", "postgres"];
  const started: LiveServer[] = [];
  const start = async (name: LiveServer["name"]) => started.push(await startLiveServer(name, log));
  const preparingSdk = prepareSdkProject();
  let sdkProject: SdkProject;
  // Awaited below, after the servers; until then a failure must not count as unhandled.
  preparingSdk.catch(() => undefined);
  try {
    if (isConsoleBuildStale(path.resolve(import.meta.dirname, "../.."))) for (const name of names) await start(name);
    else {
      const starting = await Promise.allSettled(names.map(start));
      for (const result of starting) if (result.status === "rejected") throw result.reason;
    }
    sdkProject = await preparingSdk;
  } catch (error) {
    await Promise.all(started.map((s) => s.stop()));
    const sdk = await preparingSdk.catch(() => undefined);
    if (sdk) rmSync(sdk.folder, { recursive: true, force: true });
    throw error;
  }
  project.provide("sdkProject", sdkProject);
  const servers = names.map((name) => started.find((s) => s.name === name)!);
  project.provide(
    "liveServers",
    servers.map(({ name, baseUrl, sandboxUrl, token }) => ({ name, baseUrl, sandboxUrl, token })),
  );
  return async () => {
    await Promise.all(servers.map((s) => s.stop()));
    rmSync(sdkProject.folder, { recursive: true, force: true });
  };
}
