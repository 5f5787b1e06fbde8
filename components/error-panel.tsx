"use client";

import Link from "next/link";
import { useEffect } from "react";

/** What an error boundary shows: what happened, in words, and a way on. Details stay in the server log (digest). */
export function ErrorPanel({
  error,
  reset,
  headingLevel = 1,
}: {
  error: Error & { digest?: string };
  reset: () => void;
  headingLevel?: 1 | 2;
}) {
  useEffect(() => {
    console.error(error);
  }, [error]);
  const Heading = headingLevel === 1 ? "h1" : "h2";
  return (
    <div className="empty-state empty-state--error" role="alert">
      <Heading className="empty-state__title">Something went wrong on our side</Heading>
      <div className="empty-state__body">
        <p>
          The page could not be shown. No change is ever half-applied in Verity: a transition either happened completely
          or not at all.
        </p>
        {error.digest ? (
          <p className="hint">
            Reference for the server log: <span className="mono">{error.digest}</span>
          </p>
        ) : null}
        <p className="button-row">
          <button type="button" className="button button--primary" onClick={reset}>
            Try again
          </button>
          <Link href="/tasks" className="button">
            Go to the task list
          </Link>
        </p>
      </div>
    </div>
  );
}
