import type { ExecutionView } from "@/lib/stores/execution-store";
import { CopyButton } from "@/components/copy-button";
import { RelativeTime } from "@/components/relative-time";

/**
 * The facts every view of one call shows, as items of the caller's <dl>: the
 * idempotency key every attempt shares (with its copy button), when it was
 * sent and when it settled. The task's ledger and the execution's page.
 */
export function ExecutionCallFacts({ execution: x, keyClassName }: { execution: ExecutionView; keyClassName: string }) {
  return (
    <>
      <div className={keyClassName}>
        <dt>Idempotency key</dt>
        <dd>
          <code className="key">{x.idempotencyKey}</code>
          <CopyButton value={x.idempotencyKey} what="idempotency key" />
        </dd>
      </div>
      <div>
        <dt>Sent</dt>
        <dd>{x.sentAt ? <RelativeTime value={x.sentAt} /> : <span className="subtle">not sent</span>}</dd>
      </div>
      <div>
        <dt>Settled</dt>
        <dd>
          {x.settledAt ? (
            <RelativeTime value={x.settledAt} />
          ) : (
            <span className="subtle">{x.sentAt ? "not yet" : "—"}</span>
          )}
        </dd>
      </div>
    </>
  );
}
