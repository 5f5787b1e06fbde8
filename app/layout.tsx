import type { Metadata } from "next";
import type { ReactNode } from "react";

export const metadata: Metadata = { title: "Verity", description: "Durable, conflict-safe state for AI agents" };

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body>{children}</body>
    </html>
  );
}
