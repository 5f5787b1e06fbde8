import type { ActorKind } from "@/lib/model/workflows/workflow-definition";

const labels: Record<ActorKind, string> = { agent: "agent", user: "person", system: "system" };
const hints: Record<ActorKind, string> = {
  agent: "An agent, over the API with its token",
  user: "A person with the tasks:transition permission, in this console",
  system: "Verity itself (recovery, expiry)",
};

export function ActorKinds({ kinds }: { kinds: readonly ActorKind[] }) {
  return (
    <span className="kinds">
      {kinds.map((k) => (
        <span key={k} className={`kind kind--${k}`} title={hints[k]}>
          {labels[k]}
        </span>
      ))}
    </span>
  );
}
