import type { InstructionStanding, InstructionView } from "@/lib/stores/instructions";

const directiveClass: Record<InstructionView["directive"], string> = {
  allow: "badge badge--success",
  forbid: "badge badge--danger",
  note: "badge badge--neutral",
};

const directiveLabel: Record<InstructionView["directive"], string> = { allow: "allow", forbid: "forbid", note: "note" };

export function DirectiveBadge({ directive }: { directive: InstructionView["directive"] }) {
  return <span className={directiveClass[directive]}>{directiveLabel[directive]}</span>;
}

const sourceLabel: Record<InstructionView["source"], string> = {
  operator: "operator's instruction",
  user: "the requester's words",
  agent_memory: "agent memory",
  system: "Verity",
};

/** Who said it, in words: an agent relaying the requester is named as the relay. */
export function describeSource(i: Pick<InstructionView, "source" | "issuedBy">): string {
  if (i.source === "user" && i.issuedBy.includes("/agent/")) return `the requester's words, relayed by ${i.issuedBy}`;
  return `${sourceLabel[i.source]}, ${i.issuedBy}`;
}

export function StandingLabel({ standing }: { standing: InstructionStanding }) {
  switch (standing.kind) {
    case "current":
      return <span className="badge badge--active">current</span>;
    case "superseded":
      return <span className="instr-standing">superseded by #{standing.bySeq}</span>;
    case "unauthorized":
      return (
        <span
          className="badge badge--warning"
          title="Not authorized (an agent's memory, or a relayed allow over a person's decision): recorded so people can see it, never acted upon"
        >
          unauthorized
        </span>
      );
    case "note":
      return <span className="instr-standing">note: decides nothing</span>;
  }
}
