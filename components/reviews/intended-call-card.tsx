import Link from "next/link";
import { tools, type ToolName } from "@/lib/model/executions/tools";
import { formatInteger } from "@/lib/adapters/console/shared/format";
import { formatMoney } from "@/lib/adapters/console/reviews/reviews-format";
import type { ReviewItem } from "@/lib/adapters/console/reviews/reviews-view";
import { RelativeTime } from "@/components/relative-time";
import { ExecutionStatusBadge } from "@/components/task/execution-status-badge";
import { CopyButton } from "@/components/copy-button";

function describeTool(tool: string): string | undefined {
  return tool in tools ? tools[tool as ToolName].description : undefined;
}

/** Field names of a request, in words; unknown fields are shown as they are. */
const requestLabels: Record<string, string> = {
  amount_cents: "Amount",
  currency: "Currency",
  customer_id: "Customer",
  charge_id: "Charge",
  text: "Text",
};

/** The stored request's keys come back in the database's order; show the known ones in the order a person reads them. */
const requestOrder = Object.keys(requestLabels);

function orderedEntries(request: Record<string, unknown>): Array<[string, unknown]> {
  const rank = (k: string) => (requestOrder.includes(k) ? requestOrder.indexOf(k) : requestOrder.length);
  return Object.entries(request).sort(([a], [b]) => rank(a) - rank(b) || a.localeCompare(b));
}

function requestValue(key: string, value: unknown, request: Record<string, unknown>): string {
  if (key === "amount_cents" && typeof value === "number" && typeof request.currency === "string") {
    return `${formatMoney(value, request.currency)} (${formatInteger(value)} minor units)`;
  }
  return typeof value === "string" ? value : JSON.stringify(value);
}

/** The call that is frozen, exactly as it would be sent again: tool, request, and the idempotency key every attempt shares. */
export function IntendedCallCard({
  review,
  sentTimes = [],
}: {
  review: ReviewItem;
  /** When each attempt was sent, oldest first (the execution's SENT events): sent_at is only the latest. */
  sentTimes?: readonly Date[];
}) {
  const x = review.execution;
  const firstSent = sentTimes[0] ?? x.sentAt;
  const lastSent = sentTimes.length > 1 ? sentTimes.at(-1) : undefined;
  const description = describeTool(x.tool);
  return (
    <section className="card" aria-labelledby="call-heading">
      <h2 id="call-heading">Intended call</h2>
      <div className="frozen-reason" role="note">
        <p className="frozen-reason__title">Why it is frozen</p>
        <p>{review.reason}</p>
      </div>
      <dl className="facts facts--grid call-facts">
        <div>
          <dt>Tool</dt>
          <dd>
            <span className="mono">{x.tool}</span>
            {x.irreversible ? <span className="tag tag--danger">irreversible</span> : null}
            {description ? <span className="subtle call-facts__desc">{description}</span> : null}
          </dd>
        </div>
        <div>
          <dt>Execution</dt>
          <dd>
            <ExecutionStatusBadge status={x.status} />
            <span className="subtle call-facts__desc">
              <Link href={`/executions/${encodeURIComponent(x.id)}`} className="mono">
                {x.id}
              </Link>{" "}
              · attempt {x.attempt}
            </span>
          </dd>
        </div>
        <div className="call-facts__wide">
          <dt>Idempotency key</dt>
          <dd>
            <code className="key">{x.idempotencyKey}</code>
            <CopyButton value={x.idempotencyKey} what="idempotency key" />
            <span className="subtle call-facts__desc">
              Approve &amp; execute sends with this same key: the provider applies a key at most once.
            </span>
          </dd>
        </div>
        <div>
          <dt>First sent</dt>
          <dd data-testid="first-sent">
            {firstSent ? <RelativeTime value={firstSent} /> : <span className="subtle">not sent</span>}
            {lastSent ? (
              <span className="subtle call-facts__desc">
                sent {sentTimes.length} times, last <RelativeTime value={lastSent} />
              </span>
            ) : null}
          </dd>
        </div>
        <div>
          <dt>Settled</dt>
          <dd>{x.settledAt ? <RelativeTime value={x.settledAt} /> : <span className="subtle">not settled</span>}</dd>
        </div>
      </dl>
      <table className="table table--compact request-table">
        <caption>Request</caption>
        <tbody>
          {orderedEntries(x.request).map(([key, value]) => (
            <tr key={key}>
              <th scope="row">
                {requestLabels[key] ?? key} <span className="mono subtle">{key}</span>
              </th>
              <td className="mono">{requestValue(key, value, x.request)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {x.error ? (
        <p className="hint">
          Last error reported: <span className="mono">{x.error}</span>
        </p>
      ) : null}
    </section>
  );
}
