/**
 * What the agents page's server actions answer, and the choices its forms
 * offer (no server imports: shared with the forms). A token's secret
 * travels only in the answer to the action that made it: shown once, in
 * the browser that asked, never stored in clear nor shown again.
 */
export interface ShownOnceToken {
  /** The bearer token itself. */
  secret: string;
  id: string;
  identity: string;
  /** ISO time, or null for a token that does not expire. */
  expiresAt: string | null;
}

export type AgentsFormState =
  | { status: "idle" }
  | { status: "done"; message: string; token?: ShownOnceToken }
  | { status: "conflict"; message: string }
  | { status: "error"; message: string };

export const idleAgentsForm: AgentsFormState = { status: "idle" };

/** How long a new agent's token lives; "never" is a token that works until revoked. */
export const tokenLifetimes = [
  { value: "7d", label: "7 days", seconds: 7 * 86_400 },
  { value: "30d", label: "30 days", seconds: 30 * 86_400 },
  { value: "90d", label: "90 days", seconds: 90 * 86_400 },
  { value: "365d", label: "1 year", seconds: 365 * 86_400 },
  { value: "never", label: "Never (until revoked)", seconds: null },
] as const;
export const defaultTokenLifetime = "90d";

/** How long a rotated token keeps working beside its successor. */
export const rotationOverlaps = [
  { value: "0", label: "none: stops at once", seconds: 0 },
  { value: "300", label: "5 minutes", seconds: 300 },
  { value: "3600", label: "1 hour", seconds: 3600 },
  { value: "86400", label: "24 hours", seconds: 86_400 },
  { value: "604800", label: "7 days", seconds: 604_800 },
] as const;
export const defaultRotationOverlap = "3600";
