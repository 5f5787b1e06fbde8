import type { ReactNode } from "react";
import { formatDateTime } from "@/lib/adapters/console/shared/format";
import { formatMoney, summarizeEvidence } from "@/lib/adapters/console/reviews/reviews-format";
import type { ProviderLookupView } from "@/lib/adapters/console/reviews/reviews-view";
import { EvidenceDetails } from "@/components/task/execution-evidence";

function Frame({ children, askedAt }: { children: ReactNode; askedAt?: Date }) {
  return (
    <section className="card" aria-labelledby="lookup-heading" aria-live="polite">
      <h2 id="lookup-heading">What the provider says now</h2>
      {children}
      {askedAt ? (
        <p className="hint">Asked at {formatDateTime(askedAt)}, when this page was loaded. Reload to ask again.</p>
      ) : null}
    </section>
  );
}

export function ProviderLookupPending() {
  return (
    <Frame>
      <p className="lookup lookup--pending" role="status">
        <span className="lookup__word">Asking…</span> Looking the idempotency key up at the provider.
      </p>
    </Frame>
  );
}

/**
 * The provider's answer to "do you have an effect under this key?", in one
 * word and a sentence: found, not found, or unknown. Asked server-side when
 * the page renders (streamed in, so a slow provider does not hold the page).
 */
export async function ProviderLookup({ lookup }: { lookup: Promise<ProviderLookupView> }) {
  const answer = await lookup;
  const askedAt = new Date();
  switch (answer.kind) {
    case "found":
      return (
        <Frame askedAt={askedAt}>
          <p className="lookup lookup--found">
            <span className="lookup__word">Found</span> The provider ({answer.provider}) has{" "}
            <span className="mono">{answer.record.id}</span>
            {typeof answer.record.amount_cents === "number" && typeof answer.record.currency === "string" ? (
              <>
                {" "}
                of <strong>{formatMoney(answer.record.amount_cents, answer.record.currency)}</strong>
              </>
            ) : null}
            {typeof answer.record.customer_id === "string" ? (
              <>
                {" "}
                for <span className="mono">{answer.record.customer_id}</span>
              </>
            ) : null}{" "}
            under this key: the effect happened.
          </p>
          {answer.mismatches.length ? (
            <p className="notice notice--error" role="alert">
              It does not match what Verity asked for: {answer.mismatches.join(", ")}. Do not accept it as this
              execution&apos;s evidence without checking.
            </p>
          ) : (
            <p className="hint">
              It matches the intended call. Accepting the provider&apos;s evidence records it as succeeded without
              sending anything.
            </p>
          )}
          <EvidenceDetails
            evidence={{ record: answer.record, evidence: answer.evidence }}
            summary={summarizeEvidence(answer.evidence)}
            label="Provider's record"
          />
        </Frame>
      );
    case "not_found":
      return (
        <Frame askedAt={askedAt}>
          <p className="lookup lookup--not-found">
            <span className="lookup__word">Not found</span> The provider ({answer.provider}) has nothing under this key.
            As far as it knows, the effect did not happen.
          </p>
          <p className="hint">Approve &amp; execute sends the request again with the same key.</p>
          <EvidenceDetails
            evidence={answer.evidence}
            summary={summarizeEvidence(answer.evidence)}
            label="Provider's answer"
          />
        </Frame>
      );
    case "unknown":
      return (
        <Frame askedAt={askedAt}>
          <p className="lookup lookup--unknown">
            <span className="lookup__word">Unknown</span> The provider ({answer.provider}) could not say whether the
            effect happened.
          </p>
          <p className="hint">
            <span className="mono">{answer.reason}</span>: {answer.message} Nothing can be concluded from this answer. A
            re-send with the same key still cannot apply twice.
          </p>
        </Frame>
      );
    case "not_asked":
      return (
        <Frame>
          <p className="lookup lookup--pending">
            <span className="lookup__word">Not asked</span> {answer.why}
          </p>
        </Frame>
      );
  }
}
