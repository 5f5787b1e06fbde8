"use client";

/** Shown only when the root layout itself fails; it replaces the whole document. */
export default function GlobalError({ reset }: { error: Error & { digest?: string }; reset: () => void }) {
  return (
    <html lang="en">
      <body style={{ fontFamily: "system-ui, sans-serif", padding: "3rem", color: "#1b1f24" }}>
        <h1>Verity could not load</h1>
        <p>Something went wrong before the console could start. Try again, or check the server log.</p>
        <button type="button" onClick={reset}>
          Try again
        </button>
      </body>
    </html>
  );
}
