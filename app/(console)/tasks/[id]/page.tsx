import type { Metadata } from "next";
import Link from "next/link";
import { notFound } from "next/navigation";
import { authorizePage, consoleDb } from "@/lib/adapters/auth/session";
import { newId } from "@/lib/core/ids";
import { loadTaskDetail } from "@/lib/adapters/console/tasks/task-detail";
import { loadExternalEffects } from "@/lib/adapters/console/reviews/reviews-ledger";
import { ForbiddenNotice } from "@/components/forbidden-notice";
import { TaskDetailView } from "@/components/task/task-detail-view";
import { ExecutionLedger } from "@/components/task/execution-ledger";
import { InstructionsPanel } from "@/components/instructions/instructions-panel";
import { TaskAlerts } from "@/components/alerts/task-alerts";
import { GateApprovals } from "@/components/gates/gate-approvals";
import { GraphThreadPanel } from "@/components/graph/graph-thread-panel";

type Props = { params: Promise<{ id: string }> };

/** Task ids never contain `%`; a malformed escape simply finds no task. */
function taskIdFrom(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

export async function generateMetadata({ params }: Props): Promise<Metadata> {
  return { title: `Task ${taskIdFrom((await params).id)}` };
}

export default async function TaskPage({ params }: Props) {
  const id = taskIdFrom((await params).id);
  const access = await authorizePage("tasks:read", `/tasks/${encodeURIComponent(id)}`);
  if (!access.ok) return <ForbiddenNotice reason={access.reason} />;
  const db = await consoleDb();
  const [detail, effects] = await Promise.all([loadTaskDetail(db, id, access.principal), loadExternalEffects(db, id)]);
  if (!detail) notFound();
  // One id per rendered form: submitting the same form twice is a retry, not a second transition.
  return (
    <>
      <nav className="task-history-link" aria-label="Task history">
        <Link href={`/tasks/${encodeURIComponent(detail.task.id)}/history`}>
          History: every event of this task, verified →
        </Link>
      </nav>
      <TaskDetailView
        detail={detail}
        principal={access.principal}
        transitionId={newId("tr")}
        effects={
          <>
            <GateApprovals
              task={detail.task}
              def={detail.def}
              transitions={detail.transitions}
              principal={access.principal}
            />
            <TaskAlerts taskId={detail.task.id} principal={access.principal} />
            <InstructionsPanel
              taskId={detail.task.id}
              principal={access.principal}
              endedIn={detail.def?.states[detail.task.status]?.terminal === true ? detail.task.status : null}
            />
            <ExecutionLedger effects={effects} principal={access.principal} taskId={detail.task.id} />
            <GraphThreadPanel taskId={detail.task.id} />
          </>
        }
      />
    </>
  );
}
