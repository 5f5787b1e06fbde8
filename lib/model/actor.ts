import type { ActorKind } from "@/lib/model/workflows/workflow-definition";

/** Who makes a change: recorded as `updated_by`, on every log row and audit entry. */
export interface Actor {
  /** SPIFFE ID of an agent, `user:<username>` for a person: becomes `updated_by`. */
  identity: string;
  kind: ActorKind;
}
