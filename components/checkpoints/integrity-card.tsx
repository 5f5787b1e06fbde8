"use client";

import type { FormEvent } from "react";
import { verifyCheckpointAction } from "@/app/(console)/checkpoints/[id]/actions";
import type { IntegrityReport } from "@/lib/model/checkpoints/checkpoint-reports";
import { formatDateTime } from "@/lib/adapters/console/shared/format";
import {
  integrityCheckInfo,
  integritySummary,
  integrityVerdict,
} from "@/lib/adapters/console/checkpoints/checkpoints-format";
import { idleVerifyForm } from "@/lib/adapters/console/checkpoints/checkpoints-form";
import { useServerActionForm } from "@/components/server-action-form";
import { IntegrityBadge } from "@/components/checkpoints/integrity-badge";

interface Props {
  checkpointId: string;
  /** The report the page was rendered with. */
  report: IntegrityReport;
  keyId: string;
  /** Whether the signing key is in this server's keyring: an unknown key makes a checkpoint unverifiable, not corrupt. */
  keyKnown: boolean;
  snapshotDigest: string;
  signature: string;
  schemaVersion: string;
}

/**
 * Every check of the verification, each with its result in words, and the
 * material it is about (digest, signature, key id). "Verify again" reads the
 * stored bytes once more, now: a checkpoint damaged after the page rendered
 * shows as such.
 */
export function IntegrityCard({
  checkpointId,
  report: initial,
  keyId,
  keyKnown,
  snapshotDigest,
  signature,
  schemaVersion,
}: Props) {
  const {
    state,
    pending: verifying,
    submit,
  } = useServerActionForm(verifyCheckpointAction, idleVerifyForm, {
    lostAnswer: {
      status: "error",
      message: "No answer from the server; the result below is from when the page was loaded.",
    },
  });
  const report = state.status === "done" ? state.report : initial;
  const verdict = integrityVerdict(report, keyId, new Set(keyKnown ? [keyId] : []));

  function onVerify(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    submit(event.currentTarget, null);
  }

  return (
    <section className="card" aria-labelledby="integrity-heading">
      <div className="card-heading-row">
        <h2 id="integrity-heading">Integrity</h2>
        <form onSubmit={onVerify} aria-busy={verifying}>
          <input type="hidden" name="checkpointId" value={checkpointId} />
          <button type="submit" className="button button--small" disabled={verifying}>
            {verifying ? "Verifying…" : "Verify again"}
          </button>
        </form>
      </div>
      <p className="ckpt-verdict">
        <IntegrityBadge verdict={verdict} explain />
      </p>
      <p role="status" className="ckpt-verified">
        {state.status === "done"
          ? `Verified again at ${formatDateTime(new Date(state.verifiedAt))}: ${integritySummary(report).toLowerCase()}.`
          : ""}
      </p>
      {state.status === "error" ? (
        <div className="notice notice--error" role="alert">
          {state.message}
        </div>
      ) : null}
      <ol className="ckpt-checks" aria-label="Checks">
        {report.checks.map((check) => {
          const info = integrityCheckInfo[check.check];
          return (
            <li
              key={check.check}
              className={check.ok ? "ckpt-check ckpt-check--ok" : "ckpt-check ckpt-check--failed"}
              data-check={check.check}
            >
              <span className="ckpt-check__mark" aria-hidden="true">
                {check.ok ? "✓" : "✗"}
              </span>
              <div>
                <p className="ckpt-check__head">
                  <strong>{info.label}</strong>{" "}
                  <span className="ckpt-check__result">{check.ok ? "passed" : "FAILED"}</span>
                </p>
                <p className="ckpt-check__message">{check.message}</p>
                <p className="hint">{info.what}</p>
              </div>
            </li>
          );
        })}
      </ol>
      <dl className="facts ckpt-material">
        <div>
          <dt>Snapshot digest (sha256)</dt>
          <dd className="mono ckpt-hex">{snapshotDigest}</dd>
        </div>
        <div>
          <dt>Signature (HMAC-SHA256)</dt>
          <dd className="mono ckpt-hex">{signature}</dd>
        </div>
        <div>
          <dt>Key id</dt>
          <dd>
            <span className="mono">{keyId}</span>{" "}
            <span className="subtle">{keyKnown ? "· in this server's keyring" : "· not in this server's keyring"}</span>
          </dd>
        </div>
        <div>
          <dt>Schema</dt>
          <dd>
            <span className="mono">{schemaVersion}</span>
            {report.upgradedFrom.length ? (
              <span className="subtle"> · upgraded on read from {report.upgradedFrom.join(", ")}</span>
            ) : null}
          </dd>
        </div>
      </dl>
    </section>
  );
}
