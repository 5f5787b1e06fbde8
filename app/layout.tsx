import type { Metadata, Viewport } from "next";
import type { ReactNode } from "react";
import { connection } from "next/server";
import { Providers } from "@/components/providers";
import "./globals.css";

export const metadata: Metadata = {
  title: { default: "Verity", template: "%s · Verity" },
  description: "Durable, conflict-safe state for AI agents",
  // public/: the mark as SVG, a PNG for browsers without SVG icons, the home-screen icons.
  icons: {
    icon: [
      { url: "/favicon.svg", type: "image/svg+xml" },
      { url: "/favicon-32.png", sizes: "32x32", type: "image/png" },
    ],
    apple: "/apple-touch-icon.png",
  },
  manifest: "/manifest.webmanifest",
};

// Dark mode follows the system setting (app/globals.css): form controls and scrollbars follow it too.
export const viewport: Viewport = { colorScheme: "light dark" };

/**
 * Every page renders per request: its scripts carry that request's CSP nonce
 * (proxy.ts), which a page prerendered at build time could not.
 */
export default async function RootLayout({ children }: { children: ReactNode }) {
  await connection();
  return (
    <html lang="en">
      <body>
        <a className="skip-link" href="#main">
          Skip to main content
        </a>
        <Providers>{children}</Providers>
      </body>
    </html>
  );
}
