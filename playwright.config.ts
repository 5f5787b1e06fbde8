import { defineConfig, type PlaywrightTestConfig } from "@playwright/test";
import { oidcClient, oidcRoleMap } from "./e2e/oidc/accounts";
import { deployment, oidcProvider } from "./e2e/deployment/servers";
import { LONG_HISTORY_EVENTS } from "./e2e/pages/long-history";
import { isConsoleBuildStale } from "./scripts/console-build";
import { defaultChromium } from "./scripts/test-prerequisites";

/**
 * Browser and HTTP tests against a real production build on a throwaway
 * embedded database (.data/e2e, recreated each run). Playwright cannot
 * download its own browser here, so Debian's build of Chromium's headless
 * shell is used (scripts/test-prerequisites.ts brings it).
 */
const port = Number(process.env.E2E_PORT ?? 3100);
// Separate data folders let two runs (two engineers, or CI beside a dev) coexist.
const dataDir = process.env.E2E_DATA_DIR ?? ".data/e2e";
const sandboxPort = Number(process.env.E2E_SANDBOX_PORT ?? port + 1010);
// The test processes read these too (lib/config/env.ts): the server's sandbox URL and
// its data folder, where the sandbox's webhook secret lives.
process.env.SANDBOX_PORT = String(sandboxPort);
process.env.VERITY_DATA_DIR = dataDir;

// scrypt at its interactive floor on the test servers: every spec signs in,
// and at OWASP's 2^17 the hashing was a large part of the servers' CPU
// (lib/core/passwords.ts; the default is checked by its unit test).
const testScryptN = "16384";

// Against the second server, "a real deployment" (e2e/deployment/servers.ts), not the demo.
const deploymentSpecs = ["**/e2e/deployment/*.spec.ts"];

export default defineConfig({
  testDir: "e2e",
  timeout: 60_000,
  expect: { timeout: 10_000 },
  fullyParallel: false,
  workers: 2,
  retries: 0,
  reporter: [["list"], ["json", { outputFile: "test-results/e2e.json" }]],
  // Signing out ends only that browser's session (console_sessions), so the
  // specs that sign a shared demo account out run beside the others.
  projects: [
    // The first admin is created on the empty database before anyone signs in
    // there with single sign-on (which would create the first account). One
    // project on the second server, one file at a time: first-admin.spec.ts
    // first (files go in name order, and this project is queued before the
    // demo server's), then single-sign-on.spec.ts, beside the demo server's
    // specs on the other worker. As two projects, one depending on the other,
    // single sign-on was a phase of its own after every other spec had
    // finished: one worker busy, the other idle.
    {
      name: "deployment",
      testMatch: deploymentSpecs,
      workers: 1,
      use: { baseURL: deployment.baseURL },
    },
    { name: "console and API", testIgnore: deploymentSpecs },
  ],
  use: {
    baseURL: `http://localhost:${port}`,
    // DOM snapshots and sources, no screencast: the screencast's frames were
    // half the test side's CPU on two cores (docs/architecture.md, Tests), and a failure
    // keeps its screenshot and error context besides.
    trace: { mode: "retain-on-failure", screenshots: false, snapshots: true, sources: true },
    screenshot: "only-on-failure",
    // Playwright's defaults wait forever: a step that hangs (a navigation
    // that never comes) should fail naming itself, not as the test's timeout.
    navigationTimeout: 90_000,
    actionTimeout: 45_000,
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH ?? defaultChromium.path,
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    },
  },
  webServer: webServers(),
});

/**
 * The three servers. Playwright starts its webServer entries in order, each
 * once the one before answers. The demo server's start is mostly one core's
 * work (migrations, demo data, the long-history task through the engine), and
 * so is the deployment server's (a new embedded database's migrations, then
 * Next): on an up-to-date build (`npm test`'s vitest stage has built it)
 * the deployment server is launched first and only waited for after the demo
 * server answers, so their starts share the machine's two cores instead of
 * following each other. On a stale build the demo server builds (while it
 * seeds) and the deployment server starts after it and finds the build
 * done, so there is one build and never two at once.
 */
function webServers(): NonNullable<PlaywrightTestConfig["webServer"]> {
  const demo = {
    command: `rm -rf '${dataDir}' && npx tsx scripts/start.ts`,
    // The sandbox provider gets its own port too, so e2e runs beside `npm start`.
    env: {
      VERITY_DATA_DIR: dataDir,
      PORT: String(port),
      SANDBOX_PORT: String(sandboxPort),
      VERITY_RECONCILE_INTERVAL_MS: "1000",
      VERITY_E2E_LONG_HISTORY: process.env.VERITY_E2E_LONG_HISTORY ?? String(LONG_HISTORY_EVENTS),
      VERITY_PASSWORD_SCRYPT_N: testScryptN,
    },
    url: `http://localhost:${port}/api/health`,
    // The build, and (VERITY_E2E_LONG_HISTORY) a 5,000-transition task seeded
    // meanwhile: about a minute on a quiet machine, ten on a shared 2-core box.
    timeout: 1_500_000,
    reuseExistingServer: false,
    stdout: "pipe" as const,
  };
  // A real OpenID Connect provider (oidc-provider) for single sign-on.
  const oidc = {
    command: "npx tsx e2e/oidc/provider.ts",
    url: `${oidcProvider.issuer}/.well-known/openid-configuration`,
    timeout: 60_000,
    reuseExistingServer: false,
    stdout: "pipe" as const,
  };
  // "A real deployment": the same build, its own empty database, no demo
  // data, single sign-on beside passwords. Its output is kept in a file as
  // well, where the first-admin spec reads the one-time setup link that
  // scripts/start.ts prints.
  const deploymentServer = {
    command: `rm -rf '${deployment.dataDir}' '${deployment.log}' && npx tsx scripts/start.ts 2>&1 | tee '${deployment.log}'`,
    env: {
      VERITY_DATA_DIR: deployment.dataDir,
      PORT: String(deployment.port),
      SANDBOX_PORT: String(deployment.sandboxPort),
      VERITY_DEMO_DATA: "false",
      VERITY_E2E_LONG_HISTORY: "0",
      VERITY_OIDC_ISSUER: oidcProvider.issuer,
      VERITY_OIDC_CLIENT_ID: oidcClient.id,
      VERITY_OIDC_CLIENT_SECRET: oidcClient.secret,
      VERITY_OIDC_ROLE_CLAIM: "groups",
      VERITY_OIDC_ROLE_MAP: oidcRoleMap,
      VERITY_PASSWORD_SCRYPT_N: testScryptN,
    },
    url: `${deployment.baseURL}/api/health`,
    // Migrating a new embedded database and starting Next: no build (see above).
    timeout: 300_000,
    reuseExistingServer: false,
    stdout: "pipe" as const,
  };
  if (isConsoleBuildStale(import.meta.dirname)) return [demo, oidc, deploymentServer];
  return [
    oidc,
    // Launched, not waited for: Playwright goes on once the start script's first line is out (the port was
    // checked free before the launch, as for every entry with a url).
    { ...deploymentServer, wait: { stdout: /verity: database:/ } },
    demo,
    // Then waited for: a URL that already answers launches nothing (reuseExistingServer); one that does not yet
    // is waited for beside a placeholder process that only follows the server's log.
    {
      command: `tail -F '${deployment.log}' > /dev/null`,
      url: deploymentServer.url,
      timeout: deploymentServer.timeout,
      reuseExistingServer: true,
    },
  ];
}
