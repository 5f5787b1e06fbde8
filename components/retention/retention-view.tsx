import Link from "next/link";
import { formatDuration } from "@/lib/core/format-duration";
import { shortIdentity } from "@/lib/adapters/console/shared/format";
import {
  describeHoldScope,
  type RetentionOverview,
  type RetentionPolicy,
} from "@/lib/adapters/console/retention/retention";
import { RelativeTime } from "@/components/relative-time";
import { TableWrap } from "@/components/table-wrap";
import {
  ApplyRetentionForm,
  ApplyTaskRetentionForm,
  PlaceHoldForm,
  ReleaseHoldForm,
  SetRetentionTermForm,
} from "@/components/retention/retention-forms";
import { dataClasses } from "@/lib/model/retention/data-classes-held";
import "@/components/retention/retention.css";

/** /audit/retention: the policy, what retention removed, the holds that stop it, and the admin's controls. */
export function RetentionView({ policy, overview }: { policy: RetentionPolicy; overview: RetentionOverview }) {
  const active = overview.holds.filter((h) => !h.releasedAt);
  const released = overview.holds.filter((h) => h.releasedAt);
  return (
    <div className="retention-page">
      <header className="page-header">
        <nav aria-label="Breadcrumb" className="breadcrumb">
          <ol>
            <li>
              <Link href="/audit">Audit log</Link>
            </li>
            <li aria-current="page">Retention and legal holds</li>
          </ol>
        </nav>
        <div className="page-header__row">
          <h1>Retention and legal holds</h1>
        </div>
        <p className="lede">
          Old audit entries, and finished tasks&apos; data in every store, may be deleted by policy; a legal hold
          freezes that deletion for what it covers (correction annotations stay possible). Each run records where it cut
          each audit stream, so what remains still verifies.
        </p>
      </header>

      <section className="card" aria-labelledby="policy-title">
        <h2 id="policy-title">Current policy</h2>
        {policy.olderThanDays === null ? (
          <p data-testid="retention-policy">
            <strong>Keep every entry forever.</strong> <code>VERITY_AUDIT_RETENTION_DAYS</code> is not set, so the
            server deletes nothing on its own. An administrator may still apply retention by hand below.
          </p>
        ) : (
          <p data-testid="retention-policy">
            <strong>Delete entries older than {policy.olderThanDays} days</strong>, except under a legal hold, checked
            at most every {formatDuration(policy.everyMs)} by the server (<code>VERITY_AUDIT_RETENTION_DAYS</code>,{" "}
            <code>VERITY_AUDIT_RETENTION_INTERVAL_MS</code>).
            {policy.loopOff
              ? " The background loop is off (VERITY_RECONCILE_INTERVAL_MS=0), so no scheduled run happens."
              : ""}
          </p>
        )}
      </section>

      <section className="card" aria-labelledby="task-policy-title">
        <h2 id="task-policy-title">Finished tasks&apos; data</h2>
        {policy.tenantPolicy.isSet ? (
          <div data-testid="task-retention-policy">
            <p>
              <strong>This tenant&apos;s policy:</strong> a finished task&apos;s data is deleted from every store once
              its last activity is older than the term of the most sensitive class it holds (undeclared data counts as
              confidential), except under a legal hold or while anything of it is pending; a class without a term keeps
              its tasks forever. Checked at most every {formatDuration(policy.everyMs)}.
              {policy.loopOff
                ? " The background loop is off (VERITY_RECONCILE_INTERVAL_MS=0), so no scheduled run happens."
                : ""}
            </p>
            <TableWrap label="Retention term per data class">
              <table className="table">
                <caption className="visually-hidden">Retention term per data class</caption>
                <thead>
                  <tr>
                    <th scope="col">Data class</th>
                    <th scope="col">Kept after last activity</th>
                  </tr>
                </thead>
                <tbody>
                  {dataClasses.map((c) => (
                    <tr key={c}>
                      <th scope="row">{c}</th>
                      <td>
                        {policy.tenantPolicy.terms[c] === null ? "forever" : `${policy.tenantPolicy.terms[c]} days`}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableWrap>
            <p>
              Set below, with <code>PUT /api/v1/retention/policies/CLASS</code> or with{" "}
              <code>npm run -s verity -- retention policy set --class CLASS --days N|never</code>
              {policy.tenantPolicy.updatedBy ? `; last changed by ${shortIdentity(policy.tenantPolicy.updatedBy)}` : ""}
              .
            </p>
          </div>
        ) : policy.taskOlderThanDays === null ? (
          <p data-testid="task-retention-policy">
            <strong>Keep every finished task&apos;s data forever.</strong> <code>VERITY_TASK_RETENTION_DAYS</code> is
            not set, so the server deletes none on its own. An administrator may still delete old finished tasks by hand
            below.
          </p>
        ) : (
          <p data-testid="task-retention-policy">
            <strong>Delete a finished task&apos;s data {policy.taskOlderThanDays} days after its last activity</strong>,
            from every store at once, except under a legal hold or while anything of it is pending (an unsettled effect,
            an undecided review, an unresolved alert, an undelivered message), checked at most every{" "}
            {formatDuration(policy.everyMs)} (<code>VERITY_TASK_RETENTION_DAYS</code>).
            {policy.loopOff
              ? " The background loop is off (VERITY_RECONCILE_INTERVAL_MS=0), so no scheduled run happens."
              : ""}
          </p>
        )}
        <h3>Set a data class&apos;s term</h3>
        <SetRetentionTermForm
          classes={dataClasses}
          terms={policy.tenantPolicy.terms}
          versions={policy.tenantPolicy.versions}
        />
        <h3>Delete finished tasks&apos; data now</h3>
        <ApplyTaskRetentionForm defaultDays={policy.taskOlderThanDays ?? 365} />
      </section>

      <section className="card" aria-labelledby="holds-title">
        <h2 id="holds-title">Legal holds</h2>
        {active.length === 0 ? (
          <p className="subtle">No legal hold is in force: retention may delete any entry old enough.</p>
        ) : (
          <div className="table-wrap">
            <table className="table" data-testid="active-holds">
              <caption className="visually-hidden">Legal holds in force</caption>
              <thead>
                <tr>
                  <th scope="col">Hold</th>
                  <th scope="col">Covers</th>
                  <th scope="col">Reason</th>
                  <th scope="col">Placed</th>
                  <th scope="col">Release</th>
                </tr>
              </thead>
              <tbody>
                {active.map((h) => (
                  <tr key={h.id}>
                    <th scope="row" className="mono">
                      {h.id}
                    </th>
                    <td>{describeHoldScope(h)}</td>
                    <td>{h.reason}</td>
                    <td>
                      <RelativeTime value={h.placedAt} /> by {shortIdentity(h.placedBy)}
                    </td>
                    <td>
                      <ReleaseHoldForm holdId={h.id} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        <h3>Place a legal hold</h3>
        <PlaceHoldForm />
        {released.length > 0 ? (
          <details className="retention-released">
            <summary>Released holds ({released.length})</summary>
            <ul>
              {released.map((h) => (
                <li key={h.id}>
                  <span className="mono">{h.id}</span>: {describeHoldScope(h)}. “{h.reason}”. Released{" "}
                  <RelativeTime value={h.releasedAt!} /> by {shortIdentity(h.releasedBy ?? "")}.
                </li>
              ))}
            </ul>
          </details>
        ) : null}
      </section>

      <section className="card" aria-labelledby="apply-title">
        <h2 id="apply-title">Apply retention now</h2>
        <p className="subtle">
          Runs the same cut the server runs on schedule, as you, and records it in the audit log (system stream).
        </p>
        <ApplyRetentionForm defaultDays={policy.olderThanDays ?? 365} />
      </section>

      <section className="card" aria-labelledby="runs-title">
        <h2 id="runs-title">Last retention runs</h2>
        {overview.runs.length === 0 ? (
          <p className="subtle">
            No retention run has deleted anything yet. A run that finds nothing old enough records nothing.
          </p>
        ) : (
          <div className="table-wrap">
            <table className="table" data-testid="retention-runs">
              <caption className="visually-hidden">Last retention runs</caption>
              <thead>
                <tr>
                  <th scope="col">When</th>
                  <th scope="col">By</th>
                  <th scope="col">What</th>
                  <th scope="col" className="num">
                    Older than
                  </th>
                  <th scope="col" className="num">
                    Streams cut
                  </th>
                  <th scope="col" className="num">
                    Kept by a hold
                  </th>
                  <th scope="col">Audit entry</th>
                </tr>
              </thead>
              <tbody>
                {overview.runs.map((r) => (
                  <tr key={r.entryId}>
                    <td>
                      <RelativeTime value={r.at} />
                    </td>
                    <td>{shortIdentity(r.actor)}</td>
                    <td>
                      {r.scope === "task_data"
                        ? `${r.tasks.length} finished task(s), ${r.rows} row(s) in every store`
                        : "Old audit entries"}
                    </td>
                    <td className="num">{r.olderThanDays === null ? "—" : `${r.olderThanDays} days`}</td>
                    <td className="num">{r.streams}</td>
                    <td className="num">
                      {r.scope === "task_data" ? `${r.heldTasks} task(s)` : `${r.heldStreams} stream(s)`}
                    </td>
                    <td className="mono">{r.entryId}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        <h3>Where streams now start</h3>
        {overview.anchors.length === 0 ? (
          <p className="subtle">No stream has been cut: every stream still starts at its first entry.</p>
        ) : (
          <div className="table-wrap">
            <table className="table table--compact" data-testid="retention-anchors">
              <caption className="visually-hidden">Anchors of cut streams</caption>
              <thead>
                <tr>
                  <th scope="col">Stream</th>
                  <th scope="col" className="num">
                    Deleted through seq
                  </th>
                  <th scope="col">Anchor hash</th>
                  <th scope="col">Cut</th>
                </tr>
              </thead>
              <tbody>
                {overview.anchors.map((a) => (
                  <tr key={a.stream}>
                    <th scope="row" className="mono">
                      {a.stream}
                    </th>
                    <td className="num">{a.throughSeq}</td>
                    <td className="mono" title={a.hash}>
                      {a.hash.slice(0, 16)}…
                    </td>
                    <td>
                      <RelativeTime value={a.cutAt} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
    </div>
  );
}
