import type { StepView } from "@/lib/adapters/console/tasks/task-detail";
import { ActorKinds } from "@/components/workflow/actor-kinds";
import { BlockedReasons } from "@/components/task/blocked-reasons";

/** The graph's next steps as text: what can happen from here, who may do it, and what blocks it. */
export function NextStepsList({ status, terminal, steps }: { status: string; terminal: boolean; steps: StepView[] }) {
  return (
    <section className="card" aria-labelledby="next-steps-heading">
      <h2 id="next-steps-heading">Next steps from {status}</h2>
      {steps.length === 0 ? (
        <p className="subtle">
          {terminal ? `${status} is terminal: no transition leaves it.` : "No transition leaves this state."}
        </p>
      ) : (
        <ul className="next-steps">
          {steps.map((step) => (
            <li key={step.to} className={step.blockedBy.length ? "next-step next-step--blocked" : "next-step"}>
              <div className="next-step__head">
                <span className="mono next-step__to">→ {step.to}</span>
                <ActorKinds kinds={step.by} />
              </div>
              <p className="next-step__desc">{step.description}</p>
              {step.blockedBy.length ? (
                <BlockedReasons prefix="Blocked" reasons={step.blockedBy} />
              ) : (
                <p className="next-step__ok">Possible now</p>
              )}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
