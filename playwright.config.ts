import { defineConfig } from "@playwright/test";

/**
 * Browser and HTTP tests against a real production build on a throwaway
 * embedded database (.data/e2e, recreated each run). Playwright cannot
 * download its own browser here, so Debian's Chromium is used.
 */
const port = Number(process.env.E2E_PORT ?? 3100);
// Separate data folders let two runs (two engineers, or CI beside a dev) coexist.
const dataDir = process.env.E2E_DATA_DIR ?? ".data/e2e";
const sandboxPort = Number(process.env.E2E_SANDBOX_PORT ?? port + 1010);
// The test processes read these too (lib/config/env.ts): the server's sandbox URL and
// its data folder, where the sandbox's webhook secret lives.
process.env.SANDBOX_PORT = String(sandboxPort);
process.env.VERITY_DATA_DIR = dataDir;

const signOutSpecs = ["**/e2e/console/auth.spec.ts", "**/e2e/api/sign-in-security.spec.ts"];

export default defineConfig({
  testDir: "e2e",
  timeout: 60_000,
  expect: { timeout: 10_000 },
  fullyParallel: false,
  workers: 2,
  retries: 0,
  reporter: [["list"], ["json", { outputFile: "test-results/e2e.json" }]],
  // Signing out ends every session of that person (the session version is
  // per user), so the specs that sign a shared demo account out run last,
  // after every spec that holds a session of the same account.
  projects: [
    { name: "console and API", testIgnore: signOutSpecs },
    { name: "sign-out", testMatch: signOutSpecs, dependencies: ["console and API"] },
  ],
  use: {
    baseURL: `http://localhost:${port}`,
    trace: "retain-on-failure",
    screenshot: "only-on-failure",
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
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
  webServer: {
    command: `rm -rf '${dataDir}' && npx tsx scripts/start.ts`,
    // The sandbox provider gets its own port too, so e2e runs beside `npm start`.
    env: {
      VERITY_DATA_DIR: dataDir,
      PORT: String(port),
      SANDBOX_PORT: String(sandboxPort),
      VERITY_RECONCILE_INTERVAL_MS: "1000",
      VERITY_E2E_LONG_HISTORY: process.env.VERITY_E2E_LONG_HISTORY ?? "20000",
    },
    url: `http://localhost:${port}/api/health`,
    // The build, and (VERITY_E2E_LONG_HISTORY) a 20,000-transition task seeded
    // meanwhile: about a minute on a quiet machine, ten on a shared 2-core box.
    timeout: 1_500_000,
    reuseExistingServer: false,
    stdout: "pipe",
  },
});
