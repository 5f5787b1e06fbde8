import Link from "next/link";
import { graphThreadOfTask } from "@/lib/use-cases/graph/graph-thread-of-task";
import { RelativeTime } from "@/components/relative-time";
import { Identity } from "@/components/identity";
import { consoleDb } from "@/lib/adapters/auth/session";

const short = (id: string) => (id.length > 13 ? `${id.slice(0, 8)}…${id.slice(-4)}` : id);

/**
 * The LangGraph thread this task keeps (VeritySaver): its checkpoints newest
 * first, each a version of the task, with where it came from, a fork of an
 * older checkpoint marked, and the steps that stopped for a person.
 * Nothing for a task that is not a thread.
 */
export async function GraphThreadPanel({ taskId }: { taskId: string }) {
  const thread = await graphThreadOfTask(await consoleDb(), taskId);
  if (!thread) return null;
  return (
    <section className="card graph-thread" aria-labelledby="graph-thread-title">
      <h2 id="graph-thread-title">LangGraph thread</h2>
      <p className="subtle">
        Thread <code>{thread.threadId}</code>
        {thread.namespace ? (
          <>
            {" "}
            in namespace <code>{thread.namespace}</code>
          </>
        ) : null}
        . Each checkpoint is a version of this task, written under its lease; the history lists each with its audit
        entry.
      </p>
      {thread.checkpoints.length === 0 ? (
        <p>No checkpoints: the thread was deleted, or nothing has been written yet.</p>
      ) : (
        <div className="table-wrap">
          <table className="table">
            <caption className="visually-hidden">Checkpoints of the thread, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Checkpoint</th>
                <th scope="col">Step</th>
                <th scope="col">From</th>
                <th scope="col">Pending writes</th>
                <th scope="col">Version</th>
                <th scope="col">Written</th>
              </tr>
            </thead>
            <tbody>
              {thread.checkpoints.map((c) => (
                <tr key={`${c.checkpointNs}:${c.checkpointId}`}>
                  <td>
                    <code title={c.checkpointId}>{short(c.checkpointId)}</code>
                    {c.checkpointNs ? <span className="subtle"> in {c.checkpointNs}</span> : null}
                  </td>
                  <td>
                    {c.step ?? "–"} {c.source ? <span className="subtle">({c.source})</span> : null}
                  </td>
                  <td>
                    {c.forkedFrom ? (
                      <span className="tag tag--strong" title={`Replayed from ${c.forkedFrom}`}>
                        fork of {short(c.forkedFrom)}
                      </span>
                    ) : c.parentCheckpointId ? (
                      <code title={c.parentCheckpointId}>{short(c.parentCheckpointId)}</code>
                    ) : (
                      <span className="subtle">start</span>
                    )}
                  </td>
                  <td>
                    {c.pendingWrites}
                    {c.interrupted ? <span className="tag tag--danger"> waits for a person</span> : null}
                  </td>
                  <td>
                    <Link href={`/tasks/${encodeURIComponent(taskId)}/history`}>v{c.taskVersion}</Link>
                  </td>
                  <td>
                    <RelativeTime value={c.createdAt} /> <Identity value={c.createdBy} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {thread.more ? <p className="subtle">Older checkpoints are in the task&apos;s history.</p> : null}
    </section>
  );
}
