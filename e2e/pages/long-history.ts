/**
 * How many events the browser tests' long-history task has
 * (VERITY_E2E_LONG_HISTORY, read by playwright.config.ts for the demo server).
 *
 * 5,000: fifty pages of the history's keyset paging, enough for the windowed
 * list, the scroll to the creation and the chain's verification to be
 * exercised far past one page. It was 20,000 until 2026-12-03; seeding those
 * through the engine was about 190 s of CPU on the critical path of every
 * browser run, beside the build. That a history page costs the same at any
 * length is measured where length is cheap to make, by `npm run bench:cost`
 * (docs/cost-growth.md), not by seeding more here.
 */
export const LONG_HISTORY_EVENTS = 5_000;
