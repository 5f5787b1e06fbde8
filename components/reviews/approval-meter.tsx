import type { ApprovalState } from "@/lib/adapters/console/reviews/reviews-format";

/** The four-eyes progress as filled and empty marks: one per required approval. */
export function ApprovalMeter({ state }: { state: ApprovalState }) {
  const given = Math.min(state.approvers.length, state.required);
  return (
    <span className="approval-meter" aria-hidden="true">
      {Array.from({ length: state.required }, (_, i) => (
        <span
          key={i}
          className={i < given ? "approval-meter__mark approval-meter__mark--given" : "approval-meter__mark"}
        />
      ))}
    </span>
  );
}
