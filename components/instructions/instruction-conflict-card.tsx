import type { InstructionGuardView } from "@/lib/stores/execution-store";
import type { InstructionView } from "@/lib/stores/instructions";
import { RelativeTime } from "@/components/relative-time";
import { DirectiveBadge, describeSource } from "@/components/instructions/instruction-parts";

export type ReviewInstructions = InstructionGuardView & { frozenByGuard: boolean; neverSent: boolean };

const why: Record<InstructionGuardView["kind"], string> = {
  superseded: "The instruction this action relied on was superseded by a newer one.",
  unauthorized: "This action relied on an instruction nobody authorized (an agent's memory).",
  not_an_allow: "This action relied on an instruction that does not allow it.",
  forbidden: "The current instruction on this topic forbids it.",
  approval_requested:
    "The agent asked for a person's approval before sending this action (its framework's tool approval).",
};

/**
 * For the review of an action the instruction guard froze: what it relied on
 * and what superseded (or forbids) it, side by side, so the decision is made
 * on both. For any other review whose topic has instructions, the same two,
 * as they stand now.
 */
export function InstructionConflictCard({ instructions }: { instructions: ReviewInstructions }) {
  const { reliedOn, current, frozenByGuard, neverSent } = instructions;
  const askedByAgent = frozenByGuard && instructions.kind === "approval_requested";
  return (
    <section
      className={frozenByGuard ? "card instr-conflict instr-conflict--blocked" : "card instr-conflict"}
      aria-labelledby="instr-conflict-heading"
    >
      <h2 id="instr-conflict-heading">
        {askedByAgent
          ? "The agent asked for a person's approval"
          : frozenByGuard
            ? "Blocked by the task's instructions"
            : "The task's instructions on this action"}
      </h2>
      {frozenByGuard ? (
        <p>
          {why[instructions.kind]}{" "}
          {neverSent
            ? "It was never sent: approving sends it for the first time, under its idempotency key; rejecting cancels it."
            : null}
        </p>
      ) : (
        <p className="subtle">
          This action was frozen for another reason; these are the instructions on its topic ({instructions.topic}) as
          they stand now.
        </p>
      )}
      {askedByAgent ? null : (
        <div className="instr-conflict__pair">
          <InstructionSide
            label="Relied on"
            instruction={reliedOn}
            empty="No instruction named: the action relied on none."
            tone={current && reliedOn && current.id !== reliedOn.id ? "stale" : "plain"}
          />
          <InstructionSide
            label={frozenByGuard && instructions.kind !== "unauthorized" ? "Superseding / current" : "Current"}
            instruction={current}
            empty={`No authorized instruction on ${instructions.topic}.`}
            tone="current"
          />
        </div>
      )}
    </section>
  );
}

function InstructionSide({
  label,
  instruction,
  empty,
  tone,
}: {
  label: string;
  instruction: InstructionView | null;
  empty: string;
  tone: "stale" | "current" | "plain";
}) {
  return (
    <div className={`instr-side instr-side--${tone}`}>
      <h3 className="instr-side__label">{label}</h3>
      {instruction ? (
        <>
          <p className="instr-side__head">
            <span className="mono">#{instruction.seq}</span> <DirectiveBadge directive={instruction.directive} />{" "}
            <span className="mono">{instruction.topic}</span>
            {!instruction.authorized ? <span className="badge badge--warning">unauthorized</span> : null}
          </p>
          <p className="instr-side__text">
            {tone === "stale" ? <s>“{instruction.text}”</s> : <>“{instruction.text}”</>}
          </p>
          <p className="subtle">
            {describeSource(instruction)} · <RelativeTime value={instruction.createdAt} />
          </p>
        </>
      ) : (
        <p className="subtle">{empty}</p>
      )}
    </div>
  );
}
