/**
 * Where the second Verity server of the browser tests runs: "a real
 * deployment" (no demo data, single sign-on through e2e/oidc/provider.ts),
 * beside the demo server of playwright.config.ts. Derived from the same
 * E2E_PORT / E2E_SANDBOX_PORT / E2E_DATA_DIR, so two runs side by side
 * (two engineers, or CI beside a dev) keep apart; read by the config and by
 * the specs alike.
 */
import path from "node:path";

const port = Number(process.env.E2E_PORT ?? 3100);
const sandboxPort = Number(process.env.E2E_SANDBOX_PORT ?? port + 1010);
const dataDir = process.env.E2E_DATA_DIR ?? ".data/e2e";

export const deployment = {
  port: port + 1,
  sandboxPort: sandboxPort + 1,
  baseURL: `http://localhost:${port + 1}`,
  dataDir: `${dataDir}-deployment`,
  /** Everything the server printed (scripts/start.ts): the one-time setup link is read from here. */
  log: path.resolve(`${dataDir}-deployment.log`),
};

const oidcPort = port + 2;

export const oidcProvider = {
  port: oidcPort,
  issuer: `http://localhost:${oidcPort}`,
};
