/**
 * Tunables of the webpp policy's one budget for extra work (issue 13 §4 follow-up, issue 11's
 * "extra requests ≤ 5 % in total") and of its "busy, not dead" rule. Part of WebppOptions
 * (options.ts); every default says why.
 *
 * Sources: Envoy's retry budget (`retry_budget.budget_percent`, default 20 % of active
 * requests, and `min_retry_concurrency`, default 3: retries allowed whatever the traffic) and
 * Finagle's RetryBudget (`percentCanRetry` deposited per request, `minRetriesPerSec` as a
 * reserve): extra work is a share of the client's own first attempts, plus a small floor.
 *
 * The ceiling (docs/selection.md, "One budget for extra work"): the extra requests the policy
 * chooses (hedges, refreshes, probes, cold-start measurements, head re-decisions the budget
 * pays for) are refused at the debt limit, so over n requests they number at most
 * extraBudgetShare · n + floor + capacity, plus the cold-start race's two. On top come the
 * replacements of attempts that failed (refused, 5xx, 404, timeout, a body cut off or proven
 * to crawl), one per failure: the request itself, never refused for want of a token.
 */

import { AT_LEAST_ONE, POSITIVE, SHARE, type OptionRule } from './option-rules.js';

export interface BudgetOptions {
  /**
   * Every extra request — hedges, refreshes, probes, the cold start's measurements and
   * failovers — spends one token of one bucket that earns this share per request planned
   * (Finagle's percentCanRetry). 0.05: issue 11's goal, extra requests ≤ 5 % in total. The
   * hedge and refresh shares (hedgeBudgetShare, refreshBudgetShare) divide it further.
   */
  extraBudgetShare: number;
  /**
   * The floor: tokens the bucket holds before the first request (Envoy's
   * min_retry_concurrency, Finagle's minRetriesPerSec reserve), so that a cold client can
   * still measure a few replicas; also the most it saves up (with bucketCapacityTokens).
   * 3: a cold start on three replicas measures the two it does not use, with one token
   * left for the first hedge or failover. In the simulator's `peak` scenario (one client,
   * a constant client delay) 2 gave 1.39 × optimal against 1.10 with 3; in the herding simulation (10 000 clients
   * starting within 20 s, a request each 5 s) 4 gave the new clients' measurements twice
   * the load of their requests.
   */
  extraBudgetFloorTokens: number;
  /**
   * A timeout on a server that is busy, not dead, neither ejects it nor fails over beyond the
   * budget: busy when the server's own pushed service time S (fresh, Fei Section 4.3) is at
   * least this share of the attempt's timeout — queueing inside the server explains the
   * wait — or when it answered another exchange while this one waited. 0.25: a queue of a
   * quarter of the timeout is no crash; a dead server pushes nothing new (its last S, before
   * it died, was its normal one). Envoy's outlier detection ejects on consecutive 5xx and
   * gateway errors, not on slowness.
   */
  busyServiceShareOfTimeout: number;
}

export const BUDGET_DEFAULTS: Readonly<BudgetOptions> = Object.freeze({
  extraBudgetShare: 0.05,
  extraBudgetFloorTokens: 3,
  busyServiceShareOfTimeout: 0.25,
});

export const BUDGET_RULES: Record<keyof BudgetOptions, OptionRule> = {
  extraBudgetShare: SHARE,
  extraBudgetFloorTokens: AT_LEAST_ONE,
  busyServiceShareOfTimeout: POSITIVE,
};
