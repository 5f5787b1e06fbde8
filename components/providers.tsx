"use client";

import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import type { ReactNode } from "react";

// zod probes `new Function("")` before its first object parse to decide whether to compile fast
// paths; under the console's CSP (no 'unsafe-eval', proxy.ts) that probe is a reported violation even
// though zod catches it. Its config lives on globalThis, so it is set here without importing zod; only
// in the browser: the server keeps the compiled fast paths.
if (typeof window !== "undefined") {
  const zodConfig = ((globalThis as { __zod_globalConfig?: { jitless?: boolean } }).__zod_globalConfig ??= {});
  zodConfig.jitless = true;
}

let browserQueryClient: QueryClient | undefined;

function getQueryClient(): QueryClient {
  // One client per server render keeps requests apart; one in the browser keeps its cache across navigations.
  if (typeof window === "undefined") return new QueryClient();
  browserQueryClient ??= new QueryClient({ defaultOptions: { queries: { retry: 1, refetchOnWindowFocus: true } } });
  return browserQueryClient;
}

export function Providers({ children }: { children: ReactNode }) {
  return <QueryClientProvider client={getQueryClient()}>{children}</QueryClientProvider>;
}
