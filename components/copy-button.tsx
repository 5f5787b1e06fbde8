"use client";

import { useEffect, useState } from "react";
import "@/components/copy-button.css";

type CopyState = "idle" | "copied" | "refused";

/**
 * A small button beside an id, a key or a hash that puts the whole value on
 * the clipboard, however the value is cut on screen. Its name says what it
 * copies ("Copy execution id"), and the outcome is spoken in a live region:
 * "Copied", or where the browser refuses the clipboard (an insecure origin,
 * a denied permission) how to copy by hand.
 */
export function CopyButton({ value, what }: { value: string; what: string }) {
  const [state, setState] = useState<CopyState>("idle");
  // "Copied" goes back to the copy icon after a moment, so the next copy is announced too.
  useEffect(() => {
    if (state !== "copied") return;
    const timer = setTimeout(() => setState("idle"), 2_000);
    return () => clearTimeout(timer);
  }, [state]);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
      setState("copied");
    } catch {
      setState("refused");
    }
  };
  return (
    <span className="copy-button">
      <button
        type="button"
        className="copy-button__button"
        title={`Copy ${what}`}
        data-state={state}
        onClick={() => void copy()}
      >
        {state === "copied" ? <CheckIcon /> : <CopyIcon />}
        <span className="visually-hidden">Copy {what}</span>
      </button>
      <span role="status" className="copy-button__status">
        {state === "copied"
          ? "Copied"
          : state === "refused"
            ? `The browser refused the clipboard: select the ${what} and copy it with Ctrl+C.`
            : ""}
      </span>
    </span>
  );
}

function CopyIcon() {
  return (
    <svg viewBox="0 0 16 16" width="14" height="14" aria-hidden="true" focusable="false">
      <rect x="5.5" y="5.5" width="8" height="9" rx="1.5" fill="none" stroke="currentColor" strokeWidth="1.5" />
      <path
        d="M3.5 10.5h-.5a1 1 0 0 1-1-1V2.5a1 1 0 0 1 1-1h6a1 1 0 0 1 1 1v.5"
        fill="none"
        stroke="currentColor"
        strokeWidth="1.5"
      />
    </svg>
  );
}

function CheckIcon() {
  return (
    <svg viewBox="0 0 16 16" width="14" height="14" aria-hidden="true" focusable="false">
      <path
        d="M3 8.5l3 3 7-7"
        fill="none"
        stroke="currentColor"
        strokeWidth="1.8"
        strokeLinecap="round"
        strokeLinejoin="round"
      />
    </svg>
  );
}
