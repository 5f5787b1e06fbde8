import type { Role } from "@/lib/generated/prisma/enums";
import type { Actor } from "@/lib/model/actor";
import { AppError } from "@/lib/core/errors";
import { mayPublishTo, type AgentScopes } from "@/lib/model/agent-scopes";

export type { Role };

/**
 * Who may do what, as data. Every page, server action and API route asks
 * `requirePermission` on the server; the UI only hides what it cannot do.
 */
export type Permission =
  | "tasks:read"
  | "tasks:create"
  | "tasks:transition"
  | "workflows:read"
  | "checkpoints:read"
  | "checkpoints:create"
  | "checkpoints:restore"
  | "audit:read"
  | "audit:export"
  /** Apply retention (audit entries, finished tasks' data) and place or release legal holds. */
  | "audit:retention"
  /** Append a correction annotation to an audit entry (people only: lib/use-cases/audit/annotate-audit-entry.ts). */
  | "audit:annotate"
  | "alerts:read"
  /**
   * Open the inbox (everything waiting on a person that the role can act on: lib/model/inbox/) and
   * claim its items. Roles that decide something; an auditor decides nothing, so has no inbox.
   */
  | "inbox:read"
  /** Reconcile, escalate or acknowledge an alert (each a CAS on the alert). */
  | "alerts:act"
  | "instructions:read"
  | "instructions:write"
  /** Create people, change their roles, disable and enable them (lib/use-cases/people/). */
  | "people:manage"
  /** Create agents, revoke and rotate their tokens (lib/use-cases/agents/). */
  | "agents:manage"
  /** Publish a workflow definition version to the registry. Admins; an agent only with the `publish` scope. */
  | "workflows:publish"
  /** Move running tasks to a newer version of their workflow (a dry-run plan, then a CAS transition). */
  | "workflows:migrate"
  | "tools:read"
  /** Register, version and retire tools. Admins; an agent only with the `publish` scope. */
  | "tools:register"
  /**
   * See restricted fields (lib/model/data-classes.ts) unmasked in the API and
   * the console. Without it they read "[restricted]" (docs/encryption.md).
   */
  | "data:restricted"
  /**
   * Create, suspend and reactivate tenants: platform admins only (a person's
   * `platformAdmin` flag), whatever their role. No role grants it, so no
   * tenant admin can hand it out from the console (docs/tenants.md).
   */
  | "tenants:manage";

export const permissionsByRole: Record<Role, readonly Permission[]> = {
  operator: [
    "tasks:read",
    "tasks:transition",
    "workflows:read",
    "tools:read",
    "checkpoints:read",
    "alerts:read",
    "alerts:act",
    "inbox:read",
    "instructions:read",
    "instructions:write",
    // Operators know what actually happened in the work they run; a correction says so beside the record.
    "audit:annotate",
    // An operator deciding a held refund must see whose money it is: approving a refund to an unknown
    // customer is approving blind. Their job is the individual case.
    "data:restricted",
  ],
  // Auditors read everything and change nothing; an annotation changes nothing either: it adds a
  // signed statement beside the entry it corrects, which the auditor is the first to find wrong.
  // audit:read is the log and its verification; audit:export takes a copy out of the system.
  // No data:restricted: verifying that history is whole and each change was allowed needs the chain,
  // the actors and the amounts, not whose account it was; an export leaves masked what they never saw.
  auditor: [
    "tasks:read",
    "workflows:read",
    "tools:read",
    "checkpoints:read",
    "audit:read",
    "audit:export",
    "audit:annotate",
    "alerts:read",
    "instructions:read",
  ],
  // Restoring a checkpoint rewrites a task's state (a rewind, a new version): engineers only.
  // No data:restricted: debugging a workflow needs the shape of the data and its statuses, not the customer.
  engineer: [
    "tasks:read",
    "workflows:read",
    "workflows:migrate",
    "tools:read",
    "checkpoints:read",
    "checkpoints:create",
    "checkpoints:restore",
    "audit:read",
    "alerts:read",
    "alerts:act",
    "inbox:read",
    "instructions:read",
  ],
  admin: [
    "tasks:read",
    "tasks:create",
    "tasks:transition",
    "workflows:read",
    "workflows:publish",
    "workflows:migrate",
    "tools:read",
    "tools:register",
    "checkpoints:read",
    "checkpoints:create",
    "audit:read",
    "audit:export",
    "audit:retention",
    "audit:annotate",
    "alerts:read",
    "alerts:act",
    "inbox:read",
    "instructions:read",
    "instructions:write",
    "people:manage",
    "agents:manage",
    // Admins grant every other permission, this one included; withholding it from them would only hide, not protect.
    "data:restricted",
  ],
  // Agents relay what they were told (source agent_memory or user); only people's instructions are authorized.
  // No data:restricted by role: an agent sees restricted values only when its token says so (mayReadRestricted).
  agent: [
    "tasks:read",
    "tasks:create",
    "tasks:transition",
    "workflows:read",
    "tools:read",
    "checkpoints:read",
    "checkpoints:create",
    "instructions:read",
    "instructions:write",
  ],
};

export interface Principal {
  kind: "user" | "agent";
  id: string;
  /** SPIFFE ID: what the audit trail records as the actor. */
  identity: string;
  role: Role;
  displayName: string;
  /** The tenant the person or agent belongs to: every statement made for them runs as that tenant (docs/tenants.md). */
  tenantId: string;
  /**
   * A person who manages the register of tenants (users.platform_admin), set only by the CLI and the
   * first tenant's setup; never an agent.
   */
  platformAdmin?: boolean;
  /** An agent's token scopes (lib/model/agent-scopes.ts); people carry none and keep their role's reach. */
  scopes?: AgentScopes;
}

/** Permissions no role holds: a flag on the person grants them (Principal.platformAdmin). */
const platformPermissions: ReadonlySet<Permission> = new Set(["tenants:manage"]);

export function can(
  principal: (Pick<Principal, "role"> & { platformAdmin?: boolean }) | null | undefined,
  permission: Permission,
): boolean {
  if (!principal) return false;
  if (platformPermissions.has(permission)) return principal.platformAdmin === true;
  return permissionsByRole[principal.role].includes(permission);
}

/** Why `can` said no, in words: a role's missing permission, or a platform admin's task. */
export function refusalReason(principal: Pick<Principal, "role">, permission: Permission): string {
  return platformPermissions.has(permission)
    ? `Only a platform administrator may do this (the ${permission} permission belongs to no role).`
    : `Your role (${principal.role}) does not include the ${permission} permission.`;
}

export function requirePermission(principal: Principal | null | undefined, permission: Permission): Principal {
  if (!principal) throw new AppError("unauthenticated", "Sign in or present a bearer token.");
  if (!can(principal, permission)) {
    const message = platformPermissions.has(permission)
      ? `Only a platform administrator has the ${permission} permission.`
      : `The ${principal.role} role does not have the ${permission} permission.`;
    throw new AppError("forbidden", message, { permission });
  }
  return principal;
}

/**
 * Publishing to a registry: an admin, or an agent whose token carries the
 * `publish` scope for it (a team's CI publishing its workflows). Any other
 * agent is refused naming the scope, any other person naming the permission.
 */
export function requireRegistryAuthority(
  principal: Principal | null | undefined,
  registry: "workflows" | "tools",
): Principal {
  if (principal?.kind === "agent" && principal.scopes) {
    if (mayPublishTo(principal.scopes, registry)) return principal;
    throw new AppError("forbidden", `This token's scopes do not include publishing ${registry}.`, {
      scope: "publish",
      registry,
    });
  }
  return requirePermission(principal, registry === "workflows" ? "workflows:publish" : "tools:register");
}

/**
 * Whether restricted fields are shown to this caller unmasked. A person by
 * their role's data:restricted; an agent only by its token's explicit
 * `read_restricted` scope (a worker that must re-send a held call's exact
 * request after a crash), never by its role: every agent is treated as
 * possibly hostile, and most need the statuses, not the customer.
 */
export function mayReadRestricted(principal: Principal | null | undefined): boolean {
  if (!principal) return false;
  if (principal.kind === "agent") return principal.scopes?.read_restricted === true;
  return can(principal, "data:restricted");
}

export function userIdentity(username: string): string {
  return `spiffe://verity.local/user/${username}`;
}

/** The engine's view of who acts: people take `user` edges, agents `agent` edges. */
export function actorOf(principal: Principal): Actor {
  return { identity: principal.identity, kind: principal.kind === "agent" ? "agent" : "user" };
}
