import { describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { runFormAction, type FormActionDeps, type FormActionSpec } from "@/lib/adapters/actions/form-action";
import type { Principal } from "@/lib/model/permissions";
import { AppError } from "@/lib/core/errors";

type State =
  | { status: "idle" }
  | { status: "done"; message: string }
  | { status: "conflict"; message: string; seenBy: string }
  | { status: "error"; message: string; details: string[] };

const olivia: Principal = {
  kind: "user",
  id: "usr_olivia",
  identity: "spiffe://verity.local/user/operator",
  role: "operator",
  displayName: "Olivia",
  tenantId: "default",
};

const Schema = z.object({
  taskId: z.string().min(1),
  expectedVersion: z.coerce.number().int().min(1),
  reason: z.string().trim().min(1, "Give a reason."),
});

function form(fields: Record<string, string>): FormData {
  const data = new FormData();
  for (const [k, v] of Object.entries(fields)) data.set(k, v);
  return data;
}

const good = form({ taskId: "task_1", expectedVersion: "3", reason: "  customer asked  " });

function deps(authorize: FormActionDeps["authorize"] = async () => olivia) {
  return { authorize: vi.fn(authorize), refresh: vi.fn() };
}

function spec(overrides: Partial<FormActionSpec<typeof Schema, State>> = {}): FormActionSpec<typeof Schema, State> {
  return {
    name: "cancelAction",
    permission: "tasks:transition",
    schema: Schema,
    nothingWas: "decided",
    errorState: (message, error) => ({
      status: "error",
      message,
      details: (error?.details.violations ?? []).map((v) => v.message),
    }),
    run: vi.fn(async () => ({ status: "done", message: "Cancelled." }) as const),
    ...overrides,
  };
}

describe("runFormAction: who, and may they", () => {
  it("checks the permission on the server, naming the action for the audit entry of a refusal", async () => {
    const d = deps();
    await runFormAction(spec(), good, d);
    expect(d.authorize).toHaveBeenCalledWith("tasks:transition", "action cancelAction");
  });

  it("answers an ended session in words, and neither parses, calls nor refreshes", async () => {
    const s = spec();
    const d = deps(async () => {
      throw new AppError("unauthenticated", "Sign in or present a bearer token.");
    });
    expect(await runFormAction(s, good, d)).toEqual({
      status: "error",
      message: "Your session has ended. Sign in again; nothing was decided.",
      details: [],
    });
    expect(s.run).not.toHaveBeenCalled();
    expect(d.refresh).not.toHaveBeenCalled();
  });

  it("answers a missing permission with the reason, and says nothing was done", async () => {
    const s = spec({ nothingWas: undefined });
    const d = deps(async () => {
      throw new AppError("forbidden", "The auditor role does not have the tasks:transition permission.", {
        permission: "tasks:transition",
      });
    });
    expect(await runFormAction(s, good, d)).toEqual({
      status: "error",
      message: "Not allowed: The auditor role does not have the tasks:transition permission. Nothing was changed.",
      details: [],
    });
    expect(s.run).not.toHaveBeenCalled();
  });

  it("lets anything but an AppError through to the error boundary", async () => {
    const d = deps(async () => {
      throw new Error("database down");
    });
    await expect(runFormAction(spec(), good, d)).rejects.toThrow("database down");
  });
});

describe("runFormAction: what", () => {
  it("answers a form that does not parse with its first issue's words, without calling", async () => {
    const s = spec();
    const d = deps();
    expect(await runFormAction(s, form({ taskId: "task_1", expectedVersion: "3", reason: "   " }), d)).toEqual({
      status: "error",
      message: "Give a reason.",
      details: [],
    });
    expect(s.run).not.toHaveBeenCalled();
    expect(d.refresh).not.toHaveBeenCalled();
  });

  it("uses the action's own words for an invalid form when it has them", async () => {
    const s = spec({
      invalid: (issues) => ({
        status: "error",
        message: "Reload the page.",
        details: issues.map((i) => String(i.path[0])),
      }),
    });
    expect(await runFormAction(s, form({ reason: "x" }), deps())).toEqual({
      status: "error",
      message: "Reload the page.",
      details: ["taskId", "expectedVersion"],
    });
  });
});

describe("runFormAction: the call and its answer", () => {
  it("hands the parsed form and the person as actor to the domain call, then refreshes the page", async () => {
    const s = spec();
    const d = deps();
    expect(await runFormAction(s, good, d)).toEqual({ status: "done", message: "Cancelled." });
    expect(s.run).toHaveBeenCalledWith(
      { taskId: "task_1", expectedVersion: 3, reason: "customer asked" },
      { principal: olivia, actor: { identity: olivia.identity, kind: "user" } },
    );
    expect(d.refresh).toHaveBeenCalledTimes(1);
  });

  it("does not refresh after a read, nor after the action's own check refused", async () => {
    const read = deps();
    await runFormAction(spec({ readOnly: true }), good, read);
    expect(read.refresh).not.toHaveBeenCalled();
    const refused = deps();
    const state = await runFormAction(
      spec({ run: async () => ({ status: "error", message: "Give a reason to cancel.", details: [] }) }),
      good,
      refused,
    );
    expect(state).toEqual({ status: "error", message: "Give a reason to cancel.", details: [] });
    expect(refused.refresh).not.toHaveBeenCalled();
  });

  it("answers a conflict in the action's own words, with what it read, and refreshes so the page shows what won", async () => {
    const answer = vi.fn(
      (error: AppError, { input, principal }: { input: z.output<typeof Schema>; principal: Principal }) =>
        error.code === "version_conflict"
          ? ({
              status: "conflict",
              message: `${input.taskId} is at version ${String(error.details.currentVersion)}.`,
              seenBy: principal.displayName,
            } as const)
          : undefined,
    );
    const d = deps();
    const s = spec({
      run: async () => {
        throw new AppError("version_conflict", "Expected version 3, but the task is at version 4.", {
          currentVersion: 4,
        });
      },
      answer,
    });
    expect(await runFormAction(s, good, d)).toEqual({
      status: "conflict",
      message: "task_1 is at version 4.",
      seenBy: "Olivia",
    });
    expect(d.refresh).toHaveBeenCalledTimes(1);
  });

  it("gives an error the action does not answer the standard words: its message and violations, or not allowed", async () => {
    const d = deps();
    const invariant = spec({
      run: async () => {
        throw new AppError("invariant_violated", "Budget may not decrease.", {
          violations: [{ invariant: "budget_never_decreases", message: "from 10 to 5" }],
        });
      },
      answer: () => undefined,
    });
    expect(await runFormAction(invariant, good, d)).toEqual({
      status: "error",
      message: "Budget may not decrease.",
      details: ["from 10 to 5"],
    });
    expect(d.refresh).not.toHaveBeenCalled();
    const edge = spec({
      run: async () => {
        throw new AppError("forbidden", "A user may not take this edge.", {
          violations: [{ invariant: "actor_not_permitted", message: "agents only" }],
        });
      },
    });
    expect(await runFormAction(edge, good, d)).toEqual({
      status: "error",
      message: "Not allowed: A user may not take this edge. Nothing was decided.",
      details: ["agents only"],
    });
  });

  it("refreshes after the errors the action names, and only those", async () => {
    const thrower = (code: "idempotency_conflict" | "not_found") => async () => {
      throw new AppError(code, code);
    };
    const refreshAfter = (error: AppError) => error.code === "idempotency_conflict";
    const named = deps();
    await runFormAction(spec({ run: thrower("idempotency_conflict"), refreshAfter }), good, named);
    expect(named.refresh).toHaveBeenCalledTimes(1);
    const other = deps();
    await runFormAction(spec({ run: thrower("not_found"), refreshAfter }), good, other);
    expect(other.refresh).not.toHaveBeenCalled();
  });

  it("lets a bug in the call through, without refreshing", async () => {
    const d = deps();
    const s = spec({
      run: async () => {
        throw new TypeError("cannot read properties of undefined");
      },
    });
    await expect(runFormAction(s, good, d)).rejects.toThrow(TypeError);
    expect(d.refresh).not.toHaveBeenCalled();
  });
});
