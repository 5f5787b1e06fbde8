"use client";

import { ErrorPanel } from "@/components/error-panel";

/** Inside the console shell, so the header and navigation stay usable. */
export default function ConsoleError(props: { error: Error & { digest?: string }; reset: () => void }) {
  return <ErrorPanel {...props} />;
}
