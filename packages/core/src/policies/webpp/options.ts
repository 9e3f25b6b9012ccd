/**
 * Tunables of the `webpp` policy (issue 11, docs/selection.md "The webpp policy"). Every
 * parameter carries its unit in its name; every default says why. The evaluation's sweep
 * uses these names.
 *
 * Budget: every extra request — hedges (≤ hedgeBudgetShare), refreshes (≤ refreshBudgetShare),
 * probes, the cold start's measurements, failovers and resumes — also spends from one bucket
 * of extraBudgetShare per request plus a floor (budget-options.ts), so that together they
 * stay within 5 % of requests beyond the floor.
 */
import { BUDGET_DEFAULTS, BUDGET_RULES, type BudgetOptions } from './budget-options.js';
import { HERD_DEFAULTS, HERD_RULES, type HerdOptions } from './herd-options.js';
import { AT_LEAST_ONE, COUNT, NON_NEGATIVE, OPEN_UNIT, POSITIVE, SHARE, type OptionRule } from './option-rules.js';

/** With the options of push, equivalent-server sets and first visits (herd-options.ts, issue 13) and of the one extra-request budget (budget-options.ts). */
export interface WebppOptions extends HerdOptions, BudgetOptions {
  /**
   * A hedge is sent when the chosen replica has sent no first byte by this quantile of its
   * own time to first byte (0 < q < 1). 0.95: Dean and Barroso, "The Tail at Scale" (CACM
   * 2013): deferring the hedge until the request has been outstanding longer than the p95
   * "limits the additional load to approximately 5%" while shortening the tail much (their
   * BigTable example: p99.9 from 1 800 to 74 ms for 2 % more requests). A quantile q fires
   * on at most (1 − q) of requests; the token bucket caps the rest.
   */
  hedgeQuantile: number;
  /**
   * Most hedges as a share of requests (token bucket: each request adds this many tokens,
   * a hedge spends one). 0.03: with refreshes, probes and resumes the total stays ≤ 5 %.
   * Tokens a full hedge bucket cannot hold pay for refreshes instead.
   */
  hedgeBudgetShare: number;
  /**
   * Half-life of a sample's weight, in ms of elapsed time (not in samples): a sample this
   * old counts half as much as a new one. 7 000: Finagle's and Linkerd's peak-EWMA default
   * decay τ = 10 s (PeakEwma.scala, tower peak_ewma.rs) has a half-life of τ·ln 2 ≈ 6.9 s;
   * short enough that a refresh every few seconds outweighs the past within one or two.
   */
  estimateHalfLifeMs: number;
  /**
   * Most refreshes (background HEAD or small ranged GET to servers not in use) as a share of
   * requests. 0.015: the rest of the 5 % after hedges; at 10 requests/s that is one refresh
   * every ~7 s (more with unused hedge tokens), and on a change of the server in use all
   * others at once (changeStreakSamples); a server never measured is measured at once
   * (outside the budget, once per server).
   */
  refreshBudgetShare: number;
  /**
   * This many first bytes in a row beyond the server's own hedgeQuantile mean "the server in
   * use has changed": every other candidate is refreshed at once, on credit from the refresh
   * budget (token-bucket.ts, borrow). 3: by chance (at q = 0.95) once in 8 000 requests.
   */
  changeStreakSamples: number;
  /** A server measured less than this long ago is not refreshed (ms). 2 000: the budget goes to staler servers. */
  refreshMinIntervalMs: number;
  /**
   * Size of the ranged GET of a refresh when requests of at least this size are in use
   * (bytes); else a refresh is a HEAD. 32 768: one 32 KiB transfer takes ~50–250 ms on the
   * links of our scenarios, long enough to time against the first byte.
   */
  rangeRefreshBytes: number;
  /** Fewer samples than this: no quantile (no hedge, the initial timeout). 4. */
  minSamplesForQuantile: number;
  /** Bodies smaller than this do not enter the throughput estimate (bytes): their time is noise. 8 192. */
  minThroughputSampleBytes: number;
  /**
   * Timeout of an attempt = timeoutQuantileMultiple × this quantile of the server's own first
   * byte, clamped to [timeoutFloorMs, timeoutCeilingMs]. 0.99: beyond the hedge's quantile, so
   * a timeout means "dead or hanging", while the hedge covers "slow".
   */
  timeoutQuantile: number;
  /** 3: as the paper's policy (docs/selection.md, "mean multiple"): false timeouts stay rare. */
  timeoutQuantileMultiple: number;
  /** 500 ms: a nearby server's p99 of a few ms must not time out on a GC pause or a new TLS connection. */
  timeoutFloorMs: number;
  /** 5 000 ms: a wild estimate must not let a dead server hang a page. */
  timeoutCeilingMs: number;
  /** Timeout before minSamplesForQuantile samples (ms). 2 000: a cold connection to a distant server. */
  initialTimeoutMs: number;
  /**
   * Consecutive refused or reset connections that eject a server (a body cut off ejects at
   * once). 1, as the paper: an ejected server is probed again within 1–2 s, so ejecting a
   * dead server at once costs little (Envoy ejects for 30 s and waits for 5 errors). Silent
   * timeouts and stalled bodies eject at max(this, SILENT_FAILURES_TO_EJECT) in a row, and
   * never while the server answers this client; 5xx by Envoy's rule (brownout.ts). See
   * server-record.ts, learnSample. Raise it for links that drop connections now and then.
   */
  ejectAfterFailures: number;
  /**
   * Probes of an ejected server follow jittered exponential backoff (backoff.ts): the first
   * after 1–2 × probeBackoffBaseMs, each next about twice as long, at most probeBackoffCapMs
   * (Envoy's growing ejection time; jitter so that the clients of one outage do not probe
   * in lockstep). 1 000 ms: a replica that restarts is seen within 1–2 s.
   */
  probeBackoffBaseMs: number;
  /**
   * 4 000 ms: recovery (issue 22 §2): a best server that comes back is used again within
   * seconds; the probes of an ejected server settle at one every 2–4 s (equal jitter,
   * backoff.ts). Envoy caps a host's ejection at max_ejection_time (300 s), sized for a
   * proxy that sends a host real traffic to test it; here a probe is one HEAD, while each
   * second without the best server costs every request it would have served faster. A long
   * outage costs 15–30 HEADs a minute per dead server, from the one extra budget's borrowing.
   */
  probeBackoffCapMs: number;
  /** Most hedge / refresh tokens saved up (a burst). 3: one page's burst of stalls. */
  bucketCapacityTokens: number;
  /**
   * When every replica a request tried failed, the engine tries them again after the probes'
   * backoff (1–2 s, then 2–4 s: probeBackoffBaseMs, probeBackoffCapMs) as long as the request
   * is younger than this (ms); then it fails. 30 000: a failed request costs the page its
   * resource, so waiting beats failing while any replica may come back, but a page still
   * waiting after half a minute is one its user has given up on (Nielsen, "Usability
   * Engineering", 1993, §5.5: 10 s keeps the user's attention; beyond it they turn to other
   * tasks). 0: fail as soon as every replica has failed once (the paper's Figure 4).
   */
  retryWindowMs: number;
}

export const WEBPP_DEFAULTS: Readonly<WebppOptions> = Object.freeze({
  hedgeQuantile: 0.95,
  hedgeBudgetShare: 0.03,
  estimateHalfLifeMs: 7_000,
  refreshBudgetShare: 0.015,
  changeStreakSamples: 3,
  refreshMinIntervalMs: 2_000,
  rangeRefreshBytes: 32_768,
  minSamplesForQuantile: 4,
  minThroughputSampleBytes: 8_192,
  timeoutQuantile: 0.99,
  timeoutQuantileMultiple: 3,
  timeoutFloorMs: 500,
  timeoutCeilingMs: 5_000,
  initialTimeoutMs: 2_000,
  ejectAfterFailures: 1,
  probeBackoffBaseMs: 1_000,
  probeBackoffCapMs: 4_000,
  bucketCapacityTokens: 3,
  retryWindowMs: 30_000,
  ...HERD_DEFAULTS,
  ...BUDGET_DEFAULTS,
});

const RULES: Record<keyof WebppOptions, OptionRule> = {
  hedgeQuantile: OPEN_UNIT,
  hedgeBudgetShare: SHARE,
  estimateHalfLifeMs: POSITIVE,
  refreshBudgetShare: SHARE,
  changeStreakSamples: COUNT,
  refreshMinIntervalMs: NON_NEGATIVE,
  rangeRefreshBytes: COUNT,
  minSamplesForQuantile: COUNT,
  minThroughputSampleBytes: NON_NEGATIVE,
  timeoutQuantile: OPEN_UNIT,
  timeoutQuantileMultiple: POSITIVE,
  timeoutFloorMs: POSITIVE,
  timeoutCeilingMs: POSITIVE,
  initialTimeoutMs: POSITIVE,
  ejectAfterFailures: COUNT,
  probeBackoffBaseMs: POSITIVE,
  probeBackoffCapMs: POSITIVE,
  bucketCapacityTokens: AT_LEAST_ONE,
  retryWindowMs: NON_NEGATIVE,
  ...HERD_RULES,
  ...BUDGET_RULES,
};

/**
 * The webpp options among a registry call's options: its top-level keys that name a webpp
 * option (the worker and the simulator pass other policies' settings, such as `preset` and
 * `selection`, in the same object), then the keys of a nested `webpp` object, which must all
 * be webpp options.
 */
export function webppOptionsFrom(options: Record<string, unknown> | undefined): Record<string, unknown> {
  const picked: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(options ?? {})) {
    if (Object.hasOwn(WEBPP_DEFAULTS, name)) picked[name] = value;
  }
  const nested = options?.['webpp'];
  if (typeof nested === 'object' && nested !== null && !Array.isArray(nested)) Object.assign(picked, nested);
  return picked;
}

/**
 * Defaults overlaid with `partial`, validated.
 * @throws RangeError naming the option, for an unknown name or a value out of range.
 */
export function resolveWebppOptions(partial: Record<string, unknown> = {}): WebppOptions {
  const resolved: WebppOptions = { ...WEBPP_DEFAULTS };
  for (const [name, value] of Object.entries(partial)) {
    if (value === undefined) continue;
    const rule = RULES[name as keyof WebppOptions];
    if (rule === undefined) throw new RangeError(`WebppOptions has no option "${name}"`);
    if (typeof value !== 'number' || !Number.isFinite(value) || !rule[0](value)) {
      throw new RangeError(`WebppOptions.${name} must be ${rule[1]} (got ${JSON.stringify(value)})`);
    }
    resolved[name as keyof WebppOptions] = value;
  }
  checkOrder(resolved, 'timeoutFloorMs', 'timeoutCeilingMs');
  checkOrder(resolved, 'probeBackoffBaseMs', 'probeBackoffCapMs');
  // τ_leave ≥ τ_join (Fei: τ_ℓ ≥ τ_j; herd-options.ts).
  checkOrder(resolved, 'equivalentSetJoinRatio', 'equivalentSetLeaveRatio');
  return resolved;
}

/** @throws RangeError when option `low` exceeds option `high`. */
function checkOrder(options: WebppOptions, low: keyof WebppOptions, high: keyof WebppOptions): void {
  if (options[low] > options[high]) throw new RangeError(`WebppOptions.${low} must be <= ${high} (got ${options[low]} > ${options[high]})`);
}
