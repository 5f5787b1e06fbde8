"use client";

import { useState } from "react";

/**
 * A digest shown short (the first 12 hex digits, as git shows a commit), the
 * whole of it in the tooltip and on the clipboard. Where the browser refuses
 * the clipboard, the full digest is shown selected instead, to copy by hand.
 */
export function DigestCopy({ digest, label, full = false }: { digest: string; label: string; full?: boolean }) {
  const [copied, setCopied] = useState<"no" | "yes" | "refused">("no");
  const short = digest.replace(/^sha256:/, "").slice(0, 12);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(digest);
      setCopied("yes");
    } catch {
      setCopied("refused");
    }
  };
  return (
    <span className="wf-digest">
      {full || copied === "refused" ? (
        <code className="wf-digest__full" title={digest}>
          {digest}
        </code>
      ) : (
        <code title={digest}>sha256:{short}…</code>
      )}
      <button
        type="button"
        className="button button--small wf-digest__copy"
        onClick={() => void copy()}
        aria-label={`${copied === "yes" ? "Copied" : "Copy"} the digest of ${label}`}
      >
        {copied === "yes" ? "Copied" : "Copy"}
      </button>
      <span role="status" className="visually-hidden">
        {copied === "yes"
          ? `Digest of ${label} copied.`
          : copied === "refused"
            ? "The browser refused the clipboard; the full digest is shown."
            : ""}
      </span>
    </span>
  );
}
