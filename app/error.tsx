"use client";

import { ErrorPanel } from "@/components/error-panel";

export default function RootError(props: { error: Error & { digest?: string }; reset: () => void }) {
  return (
    <main id="main" className="page" tabIndex={-1}>
      <ErrorPanel {...props} />
    </main>
  );
}
