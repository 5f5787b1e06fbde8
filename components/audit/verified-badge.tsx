"use client";

import { useQuery } from "@tanstack/react-query";
import { fetchConsoleJson } from "@/lib/adapters/console/shared/console-fetch";
import { formatDateTime } from "@/lib/adapters/console/shared/format";

interface BadgeAnswer {
  ok: boolean;
  headline: string;
  detail: string | null;
  checked_at: string;
}

/** A refusal's message is its problem's detail ("Your role … does not include audit:read."), shown after "Could not verify …:". */
function fetchVerification(url: string): Promise<BadgeAnswer> {
  return fetchConsoleJson<BadgeAnswer>(url);
}

/**
 * The task's chains, verified after the page is up (a 20,000-entry task
 * takes a moment; the timeline does not wait for it). Broken names the
 * first broken link in words.
 */
export function VerifiedBadge({ url, what, onDemand = false }: { url: string; what: string; onDemand?: boolean }) {
  const query = useQuery({
    queryKey: ["audit-verify", url],
    queryFn: () => fetchVerification(url),
    staleTime: Infinity,
    retry: false,
    refetchOnWindowFocus: false,
    // On demand (the whole log): walking every chain is the reader's decision, not a page load's.
    enabled: !onDemand,
  });
  if (onDemand && query.fetchStatus === "idle" && query.isPending) {
    return (
      <div className="audit-badge audit-badge--none">
        <span>Walks every chain now: each entry&apos;s hash, each link, each stream against its head.</span>
        <button type="button" className="button button--primary button--small" onClick={() => void query.refetch()}>
          Verify chain
        </button>
      </div>
    );
  }
  const again = (
    <button
      type="button"
      className="button button--small button--ghost"
      onClick={() => void query.refetch()}
      disabled={query.isFetching}
    >
      {query.isFetching ? "Verifying…" : "Verify again"}
    </button>
  );
  if (query.isPending) {
    return (
      <p className="audit-badge audit-badge--pending" role="status">
        Verifying {what}…
      </p>
    );
  }
  if (query.isError) {
    return (
      <div className="audit-badge audit-badge--error" role="alert">
        <span>
          Could not verify {what}: {query.error.message}
        </span>{" "}
        {again}
      </div>
    );
  }
  const v = query.data;
  return (
    <div
      className={`audit-badge ${v.ok ? "audit-badge--ok" : "audit-badge--broken"}`}
      role="status"
      data-verified={v.ok ? "true" : "false"}
    >
      <span className="audit-badge__mark" aria-hidden="true">
        {v.ok ? "✓" : "✗"}
      </span>
      <span>
        <strong>{v.headline}</strong> <span className="subtle">at {formatDateTime(new Date(v.checked_at))}</span>
        {v.detail ? <span className="audit-badge__detail">{v.detail}</span> : null}
      </span>
      {again}
    </div>
  );
}
