import type { RequestContext, SandboxContext } from "@/programs/sandbox/context";
import { getFaults, getStats, health, releaseHeld, reset, setFaults } from "@/programs/sandbox/routes/admin";
import { createNote, listCustomerNotes, listNotes } from "@/programs/sandbox/routes/crm";
import { createRefund, getRefund, listRefunds } from "@/programs/sandbox/routes/refunds";
import { createRelease, createRollback, listReleases, listRollbacks } from "@/programs/sandbox/routes/releases";
import {
  registerCharge,
  stripeCreateRefund,
  stripeGetCharge,
  stripeGetRefund,
  stripeListRefunds,
} from "@/programs/sandbox/routes/stripe";

export type Method = "GET" | "POST";
export type Handler = (ctx: SandboxContext, rc: RequestContext, ...params: string[]) => Promise<void>;

export interface Route {
  pattern: RegExp;
  methods: Partial<Record<Method, Handler>>;
  /** Admin routes take no faults and are not counted as traffic. */
  isAdmin: boolean;
}

/** The whole HTTP surface; path parameters are the pattern's groups, URL-decoded. */
export const routes: Route[] = [
  { pattern: /^\/v1\/refunds$/, methods: { GET: listRefunds, POST: createRefund }, isAdmin: false },
  { pattern: /^\/v1\/refunds\/([^/]+)$/, methods: { GET: getRefund }, isAdmin: false },
  {
    pattern: /^\/v1\/crm\/customers\/([^/]+)\/notes$/,
    methods: { GET: listCustomerNotes, POST: createNote },
    isAdmin: false,
  },
  { pattern: /^\/v1\/crm\/notes$/, methods: { GET: listNotes }, isAdmin: false },
  { pattern: /^\/v1\/releases$/, methods: { GET: listReleases, POST: createRelease }, isAdmin: false },
  { pattern: /^\/v1\/rollbacks$/, methods: { GET: listRollbacks, POST: createRollback }, isAdmin: false },
  { pattern: /^\/stripe\/v1\/refunds$/, methods: { GET: stripeListRefunds, POST: stripeCreateRefund }, isAdmin: false },
  { pattern: /^\/stripe\/v1\/refunds\/([^/]+)$/, methods: { GET: stripeGetRefund }, isAdmin: false },
  { pattern: /^\/stripe\/v1\/charges\/([^/]+)$/, methods: { GET: stripeGetCharge }, isAdmin: false },
  { pattern: /^\/__sandbox\/stripe\/charges$/, methods: { POST: registerCharge }, isAdmin: true },
  { pattern: /^\/__sandbox\/stats$/, methods: { GET: getStats }, isAdmin: true },
  { pattern: /^\/__sandbox\/faults$/, methods: { GET: getFaults, POST: setFaults }, isAdmin: true },
  { pattern: /^\/__sandbox\/reset$/, methods: { POST: reset }, isAdmin: true },
  { pattern: /^\/__sandbox\/held\/release$/, methods: { POST: releaseHeld }, isAdmin: true },
  { pattern: /^\/__sandbox\/health$/, methods: { GET: health }, isAdmin: true },
];
