import type { TestProject } from "vitest/node";
import { startLiveServer, type LiveServer } from "./servers";

declare module "vitest" {
  export interface ProvidedContext {
    /** The live servers of the framework suites, by database: base URL, sandbox URL and the demo agent's token. */
    liveServers: Array<{ name: LiveServer["name"]; baseUrl: string; sandboxUrl: string; token: string }>;
  }
}

/** Once per run of the live project: a server on each database, one after the other (one build at most). */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const log = (line: string) => console.log(line);
  const servers: LiveServer[] = [];
  try {
    servers.push(await startLiveServer("embedded", log));
    servers.push(await startLiveServer("postgres", log));
  } catch (error) {
    await Promise.all(servers.map((s) => s.stop()));
    throw error;
  }
  project.provide(
    "liveServers",
    servers.map(({ name, baseUrl, sandboxUrl, token }) => ({ name, baseUrl, sandboxUrl, token })),
  );
  return async () => {
    await Promise.all(servers.map((s) => s.stop()));
  };
}
