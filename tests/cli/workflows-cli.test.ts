import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Actor } from "@/lib/model/actor";
import { getWorkflowByDigest } from "@/lib/model/workflows";
import type { WorkflowDefinitionData } from "@/lib/model/workflows/workflow-definition";
import { loadNewWorkflowDefinitions } from "@/lib/stores/workflow-registry";
import { createTask } from "@/lib/use-cases/tasks/create-task";
import { getTaskOrThrow } from "@/lib/use-cases/tasks/task-queries";
import { transitionTask } from "@/lib/use-cases/tasks/transition-task";
import { useCliDataDir, verityCliArgs } from "@/tests/cli/cli-harness";
import { createPostgresTestDatabase, type PostgresTestDatabase } from "@/tests/helpers/postgres";

/**
 * `npm run -s verity -- workflows …` as real processes: publishing a file
 * (every problem printed at its path, exit 1), listing, fetching the
 * definition back; and a version the CLI publishes into a PostgreSQL
 * database found by another process that was already running on it.
 */
const run = promisify(execFile);
const { verity } = useCliDataDir("verity-workflows-cli-");

let files: string;
beforeAll(async () => {
  files = await mkdtemp(path.join(tmpdir(), "verity-workflow-files-"));
});
afterAll(async () => rm(files, { recursive: true, force: true }));

const release: WorkflowDefinitionData = {
  name: "release-train",
  version: 1,
  title: "Release train",
  description: "Plan a release, build it, ship it.",
  initial: "planning",
  states: {
    planning: { description: "Writing the release plan." },
    building: { description: "Building it.", requiresGates: ["plan_approved"] },
    shipped: { description: "Shipped.", terminal: true, success: true },
    abandoned: { description: "Abandoned.", terminal: true },
  },
  transitions: [
    {
      from: "planning",
      to: "building",
      by: ["agent"],
      guards: [{ kind: "gates_true", gates: ["plan_approved"] }],
      description: "Plan approved: build",
    },
    { from: "building", to: "shipped", by: ["agent"], description: "Ship" },
  ],
  fromAnyNonTerminal: [{ to: "abandoned", by: ["agent", "user"], description: "Abandon" }],
  rejections: [],
};

async function fileOf(name: string, document: unknown): Promise<string> {
  const file = path.join(files, name);
  await writeFile(file, JSON.stringify(document, null, 2));
  return file;
}

/** A command expected to fail: its exit code and what it printed on stderr. */
async function failing(promise: Promise<unknown>): Promise<{ code: number; stderr: string }> {
  try {
    await promise;
  } catch (error) {
    const failed = error as { code?: number; stderr?: string };
    if (typeof failed.code !== "number") throw error;
    return { code: failed.code, stderr: failed.stderr ?? "" };
  }
  throw new Error("expected the command to fail");
}

describe("verity workflows CLI", () => {
  it("prints every problem of an invalid file at its JSON path and exits 1, publishing nothing", async () => {
    const bad = await fileOf("bad.json", {
      ...release,
      states: { ...release.states, building: { ...release.states.building, tools: ["git.push"] } },
      transitions: [...release.transitions, { from: "shipped", to: "planning", by: ["robot"], description: "Reopen" }],
    });
    const { code, stderr } = await failing(verity("workflows", "publish", bad));
    expect(code).toBe(1);
    expect(stderr).toContain("3 problem(s)");
    expect(stderr).toContain("$.transitions[2].by[0]:");
    expect(stderr).toContain('$.states.building.tools[0]: "git.push" is not a registered tool.');
    expect(stderr).toContain("$.transitions[2].from: shipped is terminal");
    expect(await verity("workflows", "list")).not.toContain("release-train");
  }, 600_000);

  it("publishes, replays the same content, refuses other content under the version, lists and gets it back", async () => {
    const file = await fileOf("release.json", release);
    const published = JSON.parse(await verity("workflows", "publish", file, "--json")) as {
      outcome: string;
      digest: string;
    };
    expect(published).toMatchObject({ outcome: "published" });
    expect(await verity("workflows", "publish", file)).toContain(
      `already published (same content) release-train v1 ${published.digest}`,
    );
    const edited = await fileOf("edited.json", { ...release, title: "Release train, edited" });
    const conflict = await failing(verity("workflows", "publish", edited));
    expect(conflict.code).toBe(1);
    expect(conflict.stderr).toContain(published.digest);

    const listed = JSON.parse(await verity("workflows", "list", "--json")) as Array<Record<string, unknown>>;
    expect(listed.find((v) => v.name === "release-train")).toMatchObject({
      version: 1,
      digest: published.digest,
      built_in: false,
      published_by: "system:cli",
      tasks: 0,
    });
    expect(listed.filter((v) => v.built_in).map((v) => `${String(v.name)} v${String(v.version)}`)).toEqual([
      "agent-task v2",
      "agent-task v1",
      "delivery v2",
      "delivery v1",
    ]);
    // What `get` prints publishes again as is: fetch, edit, publish.
    expect(JSON.parse(await verity("workflows", "get", "release-train"))).toEqual(release);
    expect(JSON.parse(await verity("workflows", "get", "delivery", "--version", "1"))).toMatchObject({
      name: "delivery",
      version: 1,
    });
    const missing = await failing(verity("workflows", "get", "release-train", "--version", "9"));
    expect(missing).toMatchObject({ code: 1 });
    expect(missing.stderr).toContain("Workflow release-train has no version 9.");
  }, 900_000);
});

describe("a version published by another process", () => {
  let pg: PostgresTestDatabase;
  beforeAll(async () => {
    pg = await createPostgresTestDatabase({ poolSize: 2 });
  }, 120_000);
  afterAll(async () => pg?.drop());

  const agent: Actor = { identity: "spiffe://verity.local/agent/coder", kind: "agent" };
  const publishFromCli = async (document: WorkflowDefinitionData) => {
    const file = await fileOf(`${document.name}-v${document.version}.json`, document);
    const { stdout } = await run(process.execPath, [...verityCliArgs(), "workflows", "publish", file, "--json"], {
      env: { ...process.env, DATABASE_URL: pg.url, VERITY_LOG_LEVEL: "silent" },
      timeout: 240_000,
    });
    return JSON.parse(stdout) as { digest: string };
  };

  it("is what this running process creates new tasks with, and drives them under", async () => {
    // This process is running already: it has read tasks, so its cache is warm with what it knew at start.
    const before = await createTask(pg.db, { workflow: "delivery", intent_id: "i-before" }, agent);
    expect(before.task.workflow.version).toBe(2);

    const { digest } = await publishFromCli(release);
    expect(getWorkflowByDigest(digest)).toBeUndefined();

    const { task } = await createTask(pg.db, { workflow: "release-train", intent_id: "i-release" }, agent);
    expect(task.workflow).toEqual({ name: "release-train", version: 1, digest });
    const approved = await transitionTask(
      pg.db,
      task.id,
      { expected_version: 1, patch: { gates: { plan_approved: true } } },
      agent,
    );
    const building = await transitionTask(
      pg.db,
      task.id,
      { expected_version: approved.task.version, to: "building" },
      agent,
    );
    expect(building.task.status).toBe("building");

    // v2 from the CLI again; a task pinned to v1 keeps v1, and the background loop's pass picks v2 up.
    const v2 = await publishFromCli({ ...release, version: 2, title: "Release train 2" });
    expect(await loadNewWorkflowDefinitions(pg.db)).toBe(1);
    expect(getWorkflowByDigest(v2.digest)?.version).toBe(2);
    expect((await getTaskOrThrow(pg.db, task.id)).workflow.digest).toBe(digest);
  }, 600_000);
});
