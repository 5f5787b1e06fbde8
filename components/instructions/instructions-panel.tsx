import type { Principal } from "@/lib/model/permissions";
import { can } from "@/lib/model/permissions";
import { getInstructionLedger, type LedgerEntry } from "@/lib/stores/instructions";
import { newId } from "@/lib/core/ids";
import { RelativeTime } from "@/components/relative-time";
import { InstructionForm } from "@/components/instructions/instruction-form";
import { DirectiveBadge, describeSource, StandingLabel } from "@/components/instructions/instruction-parts";
import { consoleDb } from "@/lib/adapters/auth/session";

/**
 * The task's instruction ledger: the current instruction per topic first
 * (what an irreversible call is held to), then every entry newest first,
 * superseded ones struck through, agent memory marked unauthorized. People
 * with instructions:write add one under CAS on the ledger's seq.
 */
export async function InstructionsPanel({
  taskId,
  principal,
  endedIn,
}: {
  taskId: string;
  principal: Principal;
  /** The terminal state the task ended in, if it has: nothing it does can follow an instruction any more. */
  endedIn: string | null;
}) {
  if (!can(principal, "instructions:read")) return null;
  const ledger = await getInstructionLedger(await consoleDb(), taskId);
  const current = Object.values(ledger.current).sort((a, b) => a.topic.localeCompare(b.topic));
  return (
    <section className="card instr-card" aria-labelledby="instructions-heading">
      <div className="card-heading-row">
        <h2 id="instructions-heading">Instructions</h2>
        <p className="ledger-card__summary">
          {ledger.items.length === 0
            ? "No instructions recorded."
            : `${ledger.items.length} in the ledger · seq ${ledger.seq}`}
        </p>
      </div>
      {current.length > 0 ? (
        <ul className="instr-current" aria-label="Current instruction per topic">
          {current.map((i) => (
            <li key={i.id} className={`instr-current__item instr-current__item--${i.directive}`}>
              <span className="instr-current__topic mono">{i.topic}</span>
              <DirectiveBadge directive={i.directive} />
              <span className="instr-current__text">“{i.text}”</span>
              <span className="subtle">
                #{i.seq} · {describeSource(i)}
              </span>
            </li>
          ))}
        </ul>
      ) : null}
      {ledger.items.length === 0 ? (
        <p className="subtle">
          Nothing has been said about this task yet. An irreversible action (a refund) is held to the latest authorized
          instruction on its topic: add “forbid” on <span className="mono">refund</span> and no refund leaves without a
          person&apos;s review.
        </p>
      ) : (
        <ol className="instr-ledger" aria-label="Instruction ledger, newest first">
          {ledger.items.map((entry) => (
            <LedgerRow key={entry.id} entry={entry} />
          ))}
        </ol>
      )}
      {endedIn ? (
        <p className="hint">
          The task has ended ({endedIn}): no further action of it can follow an instruction, so none can be added.
        </p>
      ) : can(principal, "instructions:write") ? (
        <InstructionForm
          taskId={taskId}
          expectedSeq={ledger.seq}
          instructionId={newId("ins")}
          isPerson={principal.kind === "user"}
        />
      ) : (
        <p className="hint">Your role ({principal.role}) can read the instructions but not add one.</p>
      )}
    </section>
  );
}

function LedgerRow({ entry }: { entry: LedgerEntry }) {
  const superseded = entry.standing.kind === "superseded";
  return (
    <li className={`instr-ledger__item instr-ledger__item--${entry.standing.kind}`} data-seq={entry.seq}>
      <span className="instr-ledger__seq mono">#{entry.seq}</span>
      <div className="instr-ledger__body">
        <div className="instr-ledger__head">
          <DirectiveBadge directive={entry.directive} />
          <span className="mono">{entry.topic}</span>
          <StandingLabel standing={entry.standing} />
        </div>
        <p className="instr-ledger__text">{superseded ? <s>“{entry.text}”</s> : <>“{entry.text}”</>}</p>
        <p className="subtle instr-ledger__meta">
          {describeSource(entry)} · <RelativeTime value={entry.createdAt} />
        </p>
      </div>
    </li>
  );
}
