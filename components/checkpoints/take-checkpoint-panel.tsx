"use client";

import Link from "next/link";
import type { FormEvent } from "react";
import { takeCheckpointAction } from "@/app/(console)/tasks/[id]/checkpoints/actions";
import { checkpointHref } from "@/lib/adapters/console/checkpoints/checkpoints-format";
import { idleTakeCheckpointForm } from "@/lib/adapters/console/checkpoints/checkpoints-form";
import { useServerActionForm } from "@/components/server-action-form";

/**
 * "Take checkpoint" for people whose role may create them. The id is minted
 * when the page renders, so pressing twice takes one checkpoint; the version
 * shown is the one captured, or the answer is a conflict. When the version
 * already has a valid checkpoint the button is not offered: another would
 * hold the same state, so the panel links the one there is instead.
 */
export function TakeCheckpointPanel({
  taskId,
  version,
  checkpointId,
  validCheckpointOfVersion,
}: {
  taskId: string;
  version: number;
  checkpointId: string;
  /** The id of a valid checkpoint of this very version, if there is one. */
  validCheckpointOfVersion: string | null;
}) {
  const { state, pending, submit } = useServerActionForm(takeCheckpointAction, idleTakeCheckpointForm, {
    lostAnswer: {
      status: "error",
      message:
        "No answer from the server, so the checkpoint may or may not have been taken. The list shows it as soon as the server answers; trying again is safe.",
    },
  });

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    submit(event.currentTarget, null);
  }

  return (
    <section className="card" aria-labelledby="take-checkpoint-heading">
      <h2 id="take-checkpoint-heading">Take a checkpoint</h2>
      {state.status === "done" ? (
        <div className="notice notice--success" role="status">
          {state.message} <Link href={checkpointHref(state.checkpointId)}>Inspect it</Link>
        </div>
      ) : state.status === "conflict" ? (
        <div className="notice notice--warning" role="alert">
          {state.message}
        </div>
      ) : state.status === "error" ? (
        <div className="notice notice--error" role="alert">
          {state.message}
        </div>
      ) : null}
      {validCheckpointOfVersion && state.status !== "done" ? (
        <p>
          Version {version} already has a valid checkpoint:{" "}
          <Link href={checkpointHref(validCheckpointOfVersion)}>inspect it</Link>. Another would hold the same state; a
          new one can be taken once the task moves on.
        </p>
      ) : null}
      {validCheckpointOfVersion ? null : (
        <p className="hint">
          A signed snapshot of the committed state as it is now, validated before it is taken. It changes nothing on the
          task.
        </p>
      )}
      {validCheckpointOfVersion ? null : (
        <form onSubmit={onSubmit} aria-busy={pending}>
          <input type="hidden" name="taskId" value={taskId} />
          <input type="hidden" name="expectedVersion" value={version} />
          <input type="hidden" name="checkpointId" value={checkpointId} />
          <button type="submit" className="button button--primary" disabled={pending}>
            Take checkpoint of version {version}
          </button>
          <p role="status" className="pending-note">
            {pending ? "Taking the checkpoint…" : ""}
          </p>
        </form>
      )}
    </section>
  );
}
