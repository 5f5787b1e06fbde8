import type { CheckpointTrigger } from "@/lib/model/checkpoints/checkpoint-schema";
import { describeTrigger } from "@/lib/adapters/console/checkpoints/checkpoints-format";

/** Why a checkpoint was taken: a short label, the full sentence on hover. */
export function TriggerLabel({ trigger }: { trigger: CheckpointTrigger }) {
  const { label, description } = describeTrigger(trigger);
  return (
    <span className={`ckpt-trigger ckpt-trigger--${trigger === "on_demand" ? "manual" : "auto"}`} title={description}>
      {label}
    </span>
  );
}
