"use client";

import Link from "next/link";
import { useEffect, useRef, useState, type FormEvent } from "react";
import { applyMigrationAction, planMigrationAction } from "@/app/(console)/workflows/[name]/migrate/actions";
import {
  idleMigrationApply,
  idleMigrationPlan,
  lostMigrationAnswer,
  mappingFieldPrefix,
  migrationReasonMaxLength,
  notMapped,
  taskFieldPrefix,
  type MigrationApplyFormState,
  type MigrationPlanView,
} from "@/lib/adapters/console/workflows/migration-form";
import { RequiredReasonField } from "@/components/reason-field";
import { useServerActionForm } from "@/components/server-action-form";

export interface MigrationStateOption {
  name: string;
  terminal: boolean;
}

interface Props {
  name: string;
  fromVersion: number;
  toVersion: number;
  fromStates: MigrationStateOption[];
  toStates: MigrationStateOption[];
  /** Each active state of the older version to the newer one's state of the same name, when it has one. */
  initialMapping: Record<string, string>;
}

const taskHref = (id: string) => `/tasks/${encodeURIComponent(id)}`;

/**
 * Moving tasks from one version to another: a mapping of states (same-named
 * states by default), a dry-run plan per task that writes nothing, then the
 * confirmation of that plan with a reason. The confirmation carries the
 * task versions the plan saw: a task that moved since is refused as stale,
 * never migrated over newer state. Keyed by the version pair, so choosing
 * others starts afresh.
 */
export function MigrationPanel({ name, fromVersion, toVersion, fromStates, toStates, initialMapping }: Props) {
  const active = fromStates.filter((s) => !s.terminal);
  const finished = fromStates.filter((s) => s.terminal);
  const [mapping, setMapping] = useState<Record<string, string>>(initialMapping);
  const [reason, setReason] = useState("");
  const [reasonError, setReasonError] = useState<string | null>(null);
  const reasonRef = useRef<HTMLTextAreaElement>(null);
  const resultRef = useRef<HTMLDivElement>(null);
  /** Plans already confirmed: a plan is applied once, then the result stands until a new plan. */
  const [spent, setSpent] = useState<string | null>(null);

  const {
    state: planState,
    pending: planning,
    submit: submitPlan,
  } = useServerActionForm(planMigrationAction, idleMigrationPlan, {
    lostAnswer: {
      status: "error",
      message: "No answer from the server; nothing was changed (planning never does). Try again.",
    },
  });
  const applyOnce = async (previous: MigrationApplyFormState, formData: FormData): Promise<MigrationApplyFormState> => {
    const result = await applyMigrationAction(previous, formData);
    if (result.status === "done") {
      setSpent(String(formData.get("plannedAt")));
      setReason("");
    }
    return result;
  };
  const {
    state: applyState,
    pending: applying,
    submit: submitApply,
  } = useServerActionForm(applyOnce, idleMigrationApply, {
    lostAnswer: { status: "error", message: lostMigrationAnswer },
  });

  // Focus follows the answer, so a keyboard or screen-reader user lands on what happened, not on <body>.
  useEffect(() => {
    if (applyState.status !== "idle") resultRef.current?.focus();
  }, [applyState]);

  const plan = planState.status === "done" ? planState : null;
  const planIsCurrent = plan !== null && samePlanMapping(plan.plan, mapping) && spent !== plan.plannedAt;
  const movable = plan ? plan.plan.tasks.filter((t) => t.allowed) : [];

  function onPlan(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    submitPlan(event.currentTarget, null);
  }
  function onApply(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (!reason.trim()) {
      setReasonError("Give a reason: it is recorded on each task's transition and in the audit log.");
      reasonRef.current?.focus();
      return;
    }
    setReasonError(null);
    submitApply(event.currentTarget, null);
  }

  const identity = (
    <>
      <input type="hidden" name="name" value={name} />
      <input type="hidden" name="fromVersion" value={fromVersion} />
      <input type="hidden" name="toVersion" value={toVersion} />
    </>
  );
  return (
    <>
      <section className="card" aria-labelledby="mapping-heading">
        <h2 id="mapping-heading">
          Map the states of v{fromVersion} to v{toVersion}
        </h2>
        <p className="hint">
          A task in each state of v{fromVersion} takes the state chosen here under v{toVersion}; same-named states are
          chosen for you. A state left unmapped keeps its tasks on v{fromVersion}. Finished tasks (
          {finished.map((s) => s.name).join(", ") || "none"}) are never moved.
        </p>
        <form onSubmit={onPlan} className="wf-mapping" aria-busy={planning} aria-label="State mapping">
          {identity}
          {active.map((s) => {
            const id = `map-${s.name}`;
            return (
              <div key={s.name} className="wf-mapping__row">
                <label htmlFor={id} className="mono">
                  {s.name}
                </label>
                <span aria-hidden="true">→</span>
                <select
                  id={id}
                  name={`${mappingFieldPrefix}${s.name}`}
                  value={mapping[s.name] ?? notMapped}
                  onChange={(e) => setMapping((m) => ({ ...m, [s.name]: e.target.value }))}
                >
                  <option value={notMapped}>not moved (stays on v{fromVersion})</option>
                  {toStates.map((t) => (
                    <option key={t.name} value={t.name}>
                      {t.name}
                      {t.terminal ? " (terminal)" : ""}
                    </option>
                  ))}
                </select>
              </div>
            );
          })}
          <p className="button-row">
            <button type="submit" className="button button--primary" disabled={planning}>
              {plan ? "Plan again" : "Plan the move"}
            </button>
          </p>
          <p role="status" className="pending-note">
            {planning ? "Planning…" : ""}
          </p>
        </form>
        {planState.status === "error" ? (
          <div className="notice notice--error" role="alert">
            {planState.message}
          </div>
        ) : null}
      </section>

      {applyState.status !== "idle" ? (
        <div ref={resultRef} tabIndex={-1} className="wf-migration-result">
          <ApplyFeedback state={applyState} />
        </div>
      ) : null}

      {plan && spent !== plan.plannedAt ? (
        <section className="card wf-plan" aria-labelledby="plan-heading">
          <h2 id="plan-heading">
            Plan: {movable.length} of {plan.plan.tasks.length} {plan.plan.tasks.length === 1 ? "task" : "tasks"} can
            move
          </h2>
          {!samePlanMapping(plan.plan, mapping) ? (
            <p className="notice notice--warning" role="status">
              The mapping changed since this plan was made: plan again before moving anything.
            </p>
          ) : null}
          <PlanTasks plan={plan.plan} />
          {planIsCurrent && movable.length > 0 ? (
            <form onSubmit={onApply} className="wf-apply" aria-busy={applying} noValidate aria-label="Apply the plan">
              {identity}
              <input type="hidden" name="plannedAt" value={plan.plannedAt} />
              {plan.plan.mapping.map((m) => (
                <input key={m.from} type="hidden" name={`${mappingFieldPrefix}${m.from}`} value={m.to ?? notMapped} />
              ))}
              {movable.map((t) => (
                <input key={t.taskId} type="hidden" name={`${taskFieldPrefix}${t.taskId}`} value={t.version} />
              ))}
              <RequiredReasonField
                id="migration-reason"
                inputRef={reasonRef}
                rows={2}
                maxLength={migrationReasonMaxLength}
                value={reason}
                onChange={(value) => {
                  setReason(value);
                  if (reasonError && value.trim()) setReasonError(null);
                }}
                error={reasonError}
                hint="Recorded on each task's transition with the mapping, and in the audit log."
              />
              <button type="submit" className="button button--danger" disabled={applying}>
                Move {movable.length} {movable.length === 1 ? "task" : "tasks"} to v{plan.plan.toVersion}
              </button>
              <p className="hint">
                Each task moves only if it is still at the version this plan saw; one that changed since is refused and
                keeps its state. Refused tasks above are not touched.
              </p>
              <p role="status" className="pending-note">
                {applying ? "Moving…" : ""}
              </p>
            </form>
          ) : null}
        </section>
      ) : null}
    </>
  );
}

function samePlanMapping(plan: MigrationPlanView, mapping: Record<string, string>): boolean {
  return plan.mapping.every((m) => (m.to ?? notMapped) === (mapping[m.from] ?? notMapped));
}

function PlanTasks({ plan }: { plan: MigrationPlanView }) {
  if (plan.tasks.length === 0)
    return (
      <p className="subtle">
        No active task is on v{plan.fromVersion} in a state this mapping moves. Nothing would change.
      </p>
    );
  return (
    <ul className="wf-plan__tasks" aria-label="Tasks in the plan">
      {plan.tasks.map((t) => (
        <li key={t.taskId} className={t.allowed ? "wf-plan__task" : "wf-plan__task wf-plan__task--refused"}>
          <p className="wf-plan__head">
            <Link href={taskHref(t.taskId)} className="mono">
              {t.taskId}
            </Link>{" "}
            <span className="subtle">version {t.version}</span>
          </p>
          <p className="mono">
            {t.from} → {t.to ?? "not moved"}
          </p>
          {t.allowed ? (
            <p className="wf-verdict wf-verdict--allowed">Can move</p>
          ) : (
            <div className="wf-verdict wf-verdict--refused">
              <p>Refused:</p>
              <ul>
                {t.reasons.map((r) => (
                  <li key={r}>{r}</li>
                ))}
              </ul>
            </div>
          )}
        </li>
      ))}
    </ul>
  );
}

function ApplyFeedback({ state }: { state: MigrationApplyFormState }) {
  switch (state.status) {
    case "idle":
      return null;
    case "error":
      return (
        <div className="notice notice--error" role="alert">
          {state.message}
        </div>
      );
    case "done":
      return (
        <div
          className={
            state.results.some((r) => r.outcome === "refused") ? "notice notice--warning" : "notice notice--success"
          }
          role="status"
        >
          <p className="notice__title">{state.message}</p>
          <ul className="wf-results" aria-label="What happened to each task">
            {state.results.map((r) => (
              <li key={r.taskId}>
                <Link href={taskHref(r.taskId)} className="mono">
                  {r.taskId}
                </Link>{" "}
                <strong>{r.outcome === "moved" ? "moved" : "refused"}</strong>: {r.message}
              </li>
            ))}
          </ul>
        </div>
      );
  }
}
