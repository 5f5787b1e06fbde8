/** The demo deployment's people and agents: seeded by programs/seed/seed.ts and offered on the login page. */
export const demoUsers = [
  { username: "operator", password: "operator-demo", displayName: "Olivia Operator", role: "operator" },
  { username: "operator2", password: "operator2-demo", displayName: "Omar Operator", role: "operator" },
  { username: "auditor", password: "auditor-demo", displayName: "Ada Auditor", role: "auditor" },
  { username: "engineer", password: "engineer-demo", displayName: "Eli Engineer", role: "engineer" },
  // The demo's admin manages the register of tenants too (docs/tenants.md): /platform/tenants.
  { username: "admin", password: "admin-demo", displayName: "Ana Admin", role: "admin", platformAdmin: true },
] as const;

export const demoAgent = {
  name: "refund-bot",
  identity: "spiffe://verity.local/agent/refund-bot",
  token: "vrt_demo_refund_bot_token_for_local_use_only",
} as const;

/** A read-only agent (auditor role): monitoring, and proof that roles bind tokens too. */
export const demoObserver = {
  name: "observer-bot",
  identity: "spiffe://verity.local/agent/observer-bot",
  token: "vrt_demo_observer_bot_token_read_only",
} as const;
