/**
 * What the webpp policy knows about one server, and how one exchange changes it: the first
 * byte distribution (latency-sketch.ts), the throughput (throughput.ts), and the outlier
 * state (available / ejected, with the probe backoff).
 */
import type { ExchangeSample } from '../../engine/policy-types.js';
import type { ServerId } from '../../types.js';
import { probeDelayMs } from './backoff.js';
import { ErrorShare } from './brownout.js';
import { bucketOf, LatencySketch } from './latency-sketch.js';
import type { WebppOptions } from './options.js';
import { ThroughputEstimate } from './throughput.js';
import { ServerConcurrency } from './concurrency.js';
import { connectionsFor } from './queue-ahead.js';

/** Samples a server gets from free refreshes at a cold start (the first one warms its connection). */
export const BOOTSTRAP_SAMPLES = 2;
/** What the first sample of a server still weighs once the second arrives. */
const FIRST_SAMPLE_WEIGHT = 0.05;

/** The history sketch (what a server does at its best) remembers this many times longer. */
const HISTORY_HALF_LIVES = 10;

export class ServerRecord {
  /** First bytes, with the estimate's half-life: the distribution used to rank, hedge and time out. */
  readonly ttfb = new LatencySketch();
  /** The same samples with a ten times longer half-life: the server's good level, for aging (plan.ts). */
  readonly history = new LatencySketch();
  readonly throughput = new ThroughputEstimate();
  /** How its first byte grows with this client's exchanges ahead there (concurrency.ts). Not stored. */
  readonly concurrency = new ServerConcurrency();
  /** Its recent 5xx share and streak (brownout.ts). */
  readonly errors = new ErrorShare();
  state: 'available' | 'failed' = 'available';
  /** Failures in a row (timeouts, refused/reset, 5xx, bodies cut off); a served response resets it. */
  failureStreak = 0;
  /** While ejected: probes sent since the ejection (the backoff exponent), and when the next is due. */
  probesSent = 0;
  /** When it was last ejected (engine clock; 0: not by this client since it started, e.g. a restored state). */
  ejectedAtMs = 0;
  nextProbeAtMs = 0;
  /** Probes sent while ejected whose answer is not in yet: each is paid when the server answers it (policy.ts, observe). */
  unpaidProbes = 0;
  /** Samples of the first byte folded in so far, and when the last came. */
  sampleCount = 0;
  lastSampleAtMs = 0;
  /**
   * First bytes in a row beyond the server's own hedgeQuantile (slower) or below its
   * 1 − hedgeQuantile (faster); and when the last change was flagged (0: never).
   */
  slowStreak = 0;
  fastStreak = 0;
  changeSuspectedAtMs = 0;
  /** Clock time of the last change to this record: the newer record wins when states are merged. */
  updatedAtMs = 0;
  /** Free refreshes sent to this server while it had fewer than BOOTSTRAP_SAMPLES samples (the cold start). */
  bootstrapsSent = 0;
  /** True once the ranged refresh that measures an unknown throughput went out (maintenance.ts). */
  throughputBootstrapSent = false;
  /** When a request was last planned with this server first (engine clock; 0: never). */
  requestedAtMs = 0;
  /** When the last response head from this server arrived (engine clock; 0: never): it is alive. */
  lastHeadAtMs = 0;
  /**
   * The protocol its latest answer came over, when a sample said (ExchangeSample.protocol):
   * how many exchanges it takes at once (queue-ahead.ts, connectionsFor). Not stored: the
   * first answers after a restart tell it again.
   */
  protocol: string | undefined = undefined;

  constructor(readonly server: ServerId) {}

  /** Too few samples for quantiles (no hedge, the initial timeout). */
  empty(options: WebppOptions): boolean {
    return this.sampleCount < options.minSamplesForQuantile || this.ttfb.empty;
  }

  get measured(): boolean {
    return !this.ttfb.empty;
  }

  /**
   * A first byte of `valueMs` on an exchange sent at `sentAtMs`, known at `nowMs`, counting for
   * `weight` samples; `censored`: it took at least that long (a timeout).
   */
  addFirstByte(valueMs: number, nowMs: number, options: WebppOptions, sentAtMs = nowMs - valueMs, weight = 1, censored = false): void {
    if (this.sampleCount === 1) {
      // The first exchange with a server also set up its connection (DNS, TCP, TLS), which
      // later requests on the warm connection do not pay: the second sample replaces it.
      // Not in the history (the server at its best, for aging): set-up only adds to the first
      // sample, so when it is the lower one it is what the server does at its best; discounted
      // there too, one stall in the second sample left a 5 ms replica at 779 ms for the rest of
      // a short visit (issue 22, training seed 292).
      this.ttfb.discount(FIRST_SAMPLE_WEIGHT);
    }
    this.ttfb.add(valueMs, nowMs, options.estimateHalfLifeMs, sentAtMs, weight, censored);
    this.history.add(valueMs, nowMs, options.estimateHalfLifeMs * HISTORY_HALF_LIVES, sentAtMs, weight);
    this.sampleCount++;
    this.lastSampleAtMs = Math.max(this.lastSampleAtMs, nowMs);
  }
}

/**
 * Timeout of an attempt on this server (options.ts, timeoutQuantile): a multiple of a quantile
 * of its answers. Timeouts are censored samples (latency-sketch.ts, answeredQuantileMs): they
 * raise it only when answers above them say the server does answer that late. Entered at their
 * value, as before, each timeout tripled the next (500 → 1 500 → 4 500 → the 5 s ceiling), and
 * a server that hung now and then held its next requests 5 s (the chaos bench's tail).
 */
export function timeoutMsOf(record: ServerRecord | undefined, options: WebppOptions): number {
  if (record === undefined || record.empty(options)) return options.initialTimeoutMs;
  const quantileMs = record.ttfb.answeredQuantileMs(options.timeoutQuantile);
  // Nothing answered yet, only timeouts: as before a quantile can be had.
  if (Number.isNaN(quantileMs)) return options.initialTimeoutMs;
  const timeoutMs = options.timeoutQuantileMultiple * quantileMs;
  return Math.min(options.timeoutCeilingMs, Math.max(options.timeoutFloorMs, timeoutMs));
}

/**
 * A change detector on the server's own distribution: changeStreakSamples first bytes in a
 * row beyond its hedgeQuantile, or below its 1 − hedgeQuantile, before they are folded in,
 * flag a change. The past then weighs no more than the streak (peak-EWMA's "quick to react"),
 * and the others are re-measured at once (maintenance.ts) rather than when the budget comes
 * round.
 */
function noteChange(record: ServerRecord, ttfbMs: number, nowMs: number, options: WebppOptions): void {
  // A young or sparse distribution has no tail to speak of: its p95 is its largest sample.
  if (record.ttfb.weight < MIN_WEIGHT_FOR_CHANGE) return;
  // By bucket, so that a value in the quantile's own bucket (within 2 %) is no surprise.
  const bucket = bucketOf(ttfbMs);
  const slower = bucket > bucketOf(record.ttfb.quantileMs(options.hedgeQuantile));
  const faster = bucket < bucketOf(record.ttfb.quantileMs(1 - options.hedgeQuantile));
  record.slowStreak = slower ? record.slowStreak + 1 : 0;
  record.fastStreak = faster ? record.fastStreak + 1 : 0;
  if (Math.max(record.slowStreak, record.fastStreak) < options.changeStreakSamples) return;
  record.slowStreak = 0;
  record.fastStreak = 0;
  record.changeSuspectedAtMs = nowMs;
  // The streak is the new level: the past counts as no more samples than the streak had.
  record.ttfb.discount(options.changeStreakSamples);
}

/**
 * What one first byte counts for when `contending` other exchanges of this client waited
 * beside it at the same server (ExchangeSample.contending): 1 / (1 + contending). Exchanges that
 * waited together observed one state of the server (its queue, its load, the client's own
 * burst); counted as independent samples, one page's burst outweighed the few samples a
 * replica not in use gets later, and a replica measured once under the page's own queue kept
 * that estimate for the rest of the visit (issue 22, starvation). Correlated samples carry
 * less information than as many independent ones (Kish, "Survey Sampling", 1965: the design
 * effect; the effective sample size of n equally correlated samples tends to 1 / ρ), and
 * Finagle's PeakEwma, weighing by elapsed time, likewise gives simultaneous samples the weight
 * of one moment. The burst's samples still shape the distribution (its tail, for the hedge).
 */
function momentWeight(contending: number | undefined): number {
  return 1 / (1 + Math.max(0, contending ?? 0));
}

/** Weight (decayed samples) a distribution needs before a streak beyond its quantiles means a change: 1 / (1 − 0.95). */
const MIN_WEIGHT_FOR_CHANGE = 20;

/** Outcome of learning one sample: whether the server was just ejected. */
export type LearnResult = 'ejected' | 'recovered' | 'busy' | undefined;

/**
 * Timeouts (and bodies stalled past their idle timeout) in a row, with no answer from the
 * server meanwhile, that eject it. A silent timeout is weaker evidence of death than a refused
 * connection: a stall of the server's heavy tail looks the same, and one stall during a burst
 * ejected a live fat replica and sent the rest of the page to thin links (training seeds 75
 * and 93). Two in a row by chance need two stalls (at a stall share s ≤ 6 %, s² ≤ 0.4 %); a
 * dead server gives the second at once in a burst (its exchanges time out together), or at
 * the next request sent there, which its censored timeout already ranks lower.
 */
const SILENT_FAILURES_TO_EJECT = 2;

/**
 * Folds one exchange into the record (docs/selection.md, "Failures: one or N in a row").
 * - A usable head ('served', or 'stale': the server is up, the binding is old): its first
 *   byte enters the sketch, a complete body of at least minThroughputSampleBytes the
 *   throughput; the failure streak ends and an ejected server is back.
 * - A timeout enters the sketch as a censored sample at the timeout (the first byte took at
 *   least that long): the ranking counts it at that value, the timeout's quantile as censored
 *   (timeoutMsOf).
 * - A 5xx is a brownout's answer (brownout.ts): it ejects by Envoy's rule only.
 * - A refused or reset connection, or a body cut off by an error, is what a dead server does:
 *   after ejectAfterFailures of them in a row (1 by default; a body cut off: at once) the
 *   server is ejected (Envoy outlier detection, consecutive_local_origin_failure) and probed
 *   with backoff.
 * - A timeout or a stalled body on a server that answered this client while it waited
 *   (`busy`: ExchangeSample.answeredWhileWaiting, the client's own queue, or a pushed service
 *   time that explains the wait, busy.ts) is no failure: a replica that answers, however
 *   slowly, is not marked failed (issue 22 §2). Envoy ejects on errors, not on slowness.
 * - A silent timeout or stalled body counts towards the streak, and ejects after
 *   max(ejectAfterFailures, SILENT_FAILURES_TO_EJECT) in a row.
 * - 'cancelled' (another attempt won) teaches nothing.
 */
export function learnSample(record: ServerRecord, sample: ExchangeSample, options: WebppOptions, random: () => number, busy = false): LearnResult {
  const { outcome, nowMs } = sample;
  if (outcome === 'cancelled') return undefined;
  record.updatedAtMs = Math.max(record.updatedAtMs, nowMs);
  if ((outcome === 'served' || outcome === 'stale') && sample.ttfbMs !== undefined && Number.isFinite(sample.ttfbMs)) {
    if (sample.protocol) record.protocol = sample.protocol;
    // The exchanges that waited beside this one at the server: beyond its connections (on either side), the rest waited in the browser.
    const contending = Math.min(sample.contending ?? 0, 2 * (connectionsFor(record.protocol) - 1));
    record.concurrency.add(contending, sample.ttfbMs, nowMs, options.estimateHalfLifeMs);
    noteChange(record, sample.ttfbMs, nowMs, options);
    const sentAtMs = nowMs - sample.ttfbMs - (sample.bodyMs ?? 0);
    record.addFirstByte(sample.ttfbMs, nowMs, options, sentAtMs, momentWeight(sample.contending));
    record.lastHeadAtMs = Math.max(record.lastHeadAtMs, nowMs - (sample.bodyMs ?? 0));
    const { bodyBytes, bodyMs } = sample;
    if (bodyBytes !== undefined && bodyMs !== undefined && bodyBytes >= Math.max(1, options.minThroughputSampleBytes) && bodyMs >= 0) {
      // A body much slower than the estimate is a change of the link too (throughput.ts): re-measure the others.
      if (record.throughput.add(bodyBytes, bodyMs, nowMs, options.estimateHalfLifeMs, sentAtMs) === 'slower') record.changeSuspectedAtMs = nowMs;
    }
    record.failureStreak = 0;
    record.errors.add(false);
    if (record.state === 'failed') {
      // Back from an ejection: the timeouts that led to it describe the outage, not the server
      // now (Envoy resets a host's outlier counters when its ejection ends; Finagle's failure
      // accrual forgets the failures once a probe succeeds). The answers it gave stay.
      record.ttfb.dropCensored();
      // (probesSent and nextProbeAtMs count only while it is ejected: eject() sets them again.)
      record.state = 'available';
      return 'recovered';
    }
    return undefined;
  }
  if (outcome === 'served' || outcome === 'stale') return undefined; // a head without timing: nothing to learn
  if (record.state === 'failed') return undefined; // already ejected: the probe schedule stands
  if (outcome === 'server-error') {
    // Brownouts (brownout.ts): a 5xx fails the request over at once, but ejects the server
    // only by Envoy's rule (5 in a row, or a majority of its recent answers).
    record.errors.add(true);
    if (!record.errors.ejects()) return undefined;
    record.errors.reset();
    return eject(record, nowMs, options, random);
  }
  if (outcome === 'timeout') record.addFirstByte(timeoutMsOf(record, options), nowMs, options, undefined, 1, true);
  // A timeout, or a body that stalled (rather than broke off: the engine says whether the server answered meanwhile).
  const silent = outcome === 'timeout' || (outcome === 'cut-mid-body' && sample.answeredWhileWaiting !== undefined);
  if (silent && busy) return 'busy';
  record.failureStreak++;
  const toEject = silent ? Math.max(options.ejectAfterFailures, SILENT_FAILURES_TO_EJECT) : outcome === 'cut-mid-body' ? 1 : options.ejectAfterFailures;
  if (record.failureStreak < toEject) return undefined;
  return eject(record, nowMs, options, random);
}

function eject(record: ServerRecord, nowMs: number, options: WebppOptions, random: () => number): LearnResult {
  record.state = 'failed';
  record.ejectedAtMs = nowMs;
  record.probesSent = 0;
  record.nextProbeAtMs = nowMs + probeDelayMs(0, options, random);
  return 'ejected';
}

/**
 * The harmonic mean of the measured link rates of `servers` (bytes/ms), or undefined when none
 * is measured: the rate at which plan.ts and head-redecision.ts price a link of unknown pace (a
 * byte costs 1/rate, so the mean cost per byte is the harmonic mean's).
 */
export function harmonicMeanRate(servers: readonly ServerId[], records: ReadonlyMap<ServerId, ServerRecord>): number | undefined {
  let count = 0;
  let inverseSum = 0;
  for (const server of servers) {
    const rate = records.get(server)?.throughput.bytesPerMs();
    if (rate === undefined || !(rate > 0)) continue;
    count++;
    inverseSum += 1 / rate;
  }
  return count === 0 ? undefined : count / inverseSum;
}
