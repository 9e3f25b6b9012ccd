/**
 * A small distribution of one server's time to first byte, whose samples lose weight with
 * elapsed time.
 *
 * - Decay by elapsed time, not by sample count, as Finagle's PeakEwma.scala and tower's
 *   peak_ewma.rs do (weight exp(−Δt/τ): "the frequency of observations represents an
 *   unevenly spaced time-series"): every weight is multiplied by 2^(−Δt / halfLife) when
 *   time moves on, a new sample weighs 1, and a sample after a gap Δt gets at least the
 *   share 1 − 2^(−Δt / halfLife) that Finagle's EWMA would give it. So a server sampled ten
 *   times a second keeps its tail (a stall every 50 requests) in view for a few half-lives
 *   instead of a fixed window of samples, and one refresh of a server not in use counts
 *   for what the time since its last sample says.
 * - Kept as a histogram of logarithmic buckets, as DDSketch does (Masson, Rim and Lee,
 *   VLDB 2019): bucket i holds values in (γ^(i−1), γ^i] with γ = (1 + α)/(1 − α), and its
 *   representative 2γ^i/(γ + 1) is within a relative error α of every value in it. With
 *   α = 2 %, the first bytes of one server fill a few dozen buckets, whatever the count,
 *   so the hedge's double sum over two distributions (expected-time.ts) stays cheap.
 * - Censored samples (a timeout: the first byte took longer than the timeout, by how much is
 *   not known) keep their share of each bucket apart, so that a quantile can treat them as
 *   survival analysis does (answeredQuantileMs, Kaplan–Meier) while the ranking still counts
 *   them at their value, a lower bound of what they cost.
 * Plain data; the caller passes the clock.
 */
import { expectedMs } from './expected-time.js';

/** Relative accuracy α of a bucket's representative value. */
const RELATIVE_ACCURACY = 0.02;
const GAMMA = (1 + RELATIVE_ACCURACY) / (1 - RELATIVE_ACCURACY);
const LOG_GAMMA = Math.log(GAMMA);
/** Values below this (ms) share the lowest bucket: below a timer's resolution. */
const MIN_VALUE_MS = 0.5;
/** A bucket whose weight decays below this is dropped (it no longer counts: 1 in 10^6). */
const NEGLIGIBLE_WEIGHT = 1e-6;
/** Most buckets kept (the lightest go first): 1 ms to 60 s at 2 % takes ~280. */
const MAX_BUCKETS = 400;

/**
 * Plain JSON for snapshots: [bucketIndex, weight] pairs and the time the weights refer to.
 * The censored part is not stored: a restored sample counts as an answer (its weight halves
 * every 7 s, so a timeout restored with it soon weighs nothing).
 */
export interface SketchJSON {
  buckets: Array<[number, number]>;
  atMs: number;
}

/** Values sorted ascending with normalised weights (they sum to 1). */
export interface WeightedSamples {
  valuesMs: number[];
  weights: number[];
}

/** One bucket: its decayed weight, and the share of it that came from censored samples (decay leaves a share as it is). A pair, not an object: the worker's bundle keeps property names. */
type Bucket = [weight: number, censoredShare: number];

export class LatencySketch {
  private buckets = new Map<number, Bucket>();
  /** Clock time the weights refer to: the newest sample. */
  private atMs = 0;
  /** weighted(), until the next change (decay alone does not change normalised weights). */
  private cached: WeightedSamples | undefined;
  /** answeredQuantileMs's last [q, answer], until the next change: a plan asks it once per attempt (timeoutMsOf). */
  private answered: [number, number] | undefined;

  /** Total weight (a decayed count of samples). */
  get weight(): number {
    let total = 0;
    for (const bucket of this.buckets.values()) total += bucket[0];
    return total;
  }

  get empty(): boolean {
    return this.buckets.size === 0;
  }

  /**
   * Adds a sample measured at `nowMs` on an exchange sent at `sentAtMs` (default nowMs): the
   * gap that gives a sample its share is the time without news before the exchange began,
   * not its own duration (a stall must not count as a long silence). `weight` (default 1): what
   * the sample counts for (server-record.ts: exchanges that waited together share one).
   * `censored`: the value is only a lower bound (a timeout).
   */
  add(valueMs: number, nowMs: number, halfLifeMs: number, sentAtMs = nowMs, weight = 1, censored = false): void {
    const elapsedMs = Math.min(nowMs, sentAtMs) - this.atMs;
    this.decayTo(nowMs, halfLifeMs);
    // Finagle's update, cost·w + rtt·(1 − w) with w = exp(−Δt/τ), gives a sample after a gap
    // Δt the share 1 − w of the estimate however many samples came before; a sum of decayed
    // counts would give it 1/(count + 1). The new sample gets the larger of the two shares.
    const gapShare = elapsedMs > 0 ? 1 - 2 ** (-elapsedMs / halfLifeMs) : 0;
    if (gapShare > 0 && gapShare < 1) this.discount(1 / gapShare - 1);
    const index = bucketOf(valueMs);
    const bucket: Bucket = this.buckets.get(index) ?? [0, 0];
    const before = bucket[0];
    bucket[0] = before + weight;
    bucket[1] = (bucket[1] * before + (censored ? weight : 0)) / bucket[0];
    this.buckets.set(index, bucket);
    this.cached = this.answered = undefined;
    if (this.buckets.size > MAX_BUCKETS) this.dropLightest();
  }

  /**
   * Scales the weights down so that they total at most `totalWeight`: the past counts as
   * that many samples. Peak-EWMA's rule "quick to react to latency spikes" (PeakEwma.scala):
   * after a change, the new level need not first outweigh seconds of the old one.
   */
  discount(totalWeight: number): void {
    const factor = totalWeight / this.weight;
    if (!(factor < 1)) return;
    for (const bucket of this.buckets.values()) bucket[0] *= factor;
    this.cached = this.answered = undefined;
  }

  /**
   * Drops the censored part of every bucket: the timeouts of an outage, once the server answers
   * again after its ejection (server-record.ts, learnSample). They said "no answer before T"
   * of a server that was down; counted at T by the ranking, they kept a recovered best server
   * behind a slower one for seconds after it answered.
   */
  dropCensored(): void {
    for (const [index, bucket] of this.buckets) {
      bucket[0] *= 1 - bucket[1];
      bucket[1] = 0;
      if (bucket[0] <= 0) this.buckets.delete(index);
    }
    this.cached = this.answered = undefined;
  }

  /** Buckets by value with weights normalised; the same at any later time, since all decay alike. */
  weighted(): WeightedSamples {
    if (this.cached !== undefined) return this.cached;
    const indices = [...this.buckets.keys()].sort((a, b) => a - b);
    const total = this.weight;
    this.cached = {
      valuesMs: indices.map(valueOf),
      weights: indices.map((index) => (this.buckets.get(index) as Bucket)[0] / total),
    };
    return this.cached;
  }

  meanMs(): number {
    return this.empty ? Number.NaN : expectedMs(this.weighted(), 0);
  }

  quantileMs(q: number): number {
    return weightedQuantile(this.weighted(), q);
  }

  /**
   * The q-quantile of the time to an answer, from answered and censored samples alike, by the
   * product-limit estimator (Kaplan and Meier, JASA 1958): at each value, the answers there
   * lower the survival S by their share of the weight still at risk (every sample not below
   * it, censored ones included); a censored sample leaves the risk set without an answer, so
   * its weight passes on to the answers above it (Efron's "redistribution to the right").
   * What survives the largest answer is the share that did not answer at all (a hang: the
   * "cured" share of a mixture cure model, Farewell 1982); the quantile is of the answers,
   * F(t) / F(largest answer). So a timeout never raises the quantile beyond what answers
   * support: the next timeout is not a multiple of the last (the ratchet 500 → 1 500 →
   * 4 500 ms). NaN when nothing answered.
   */
  answeredQuantileMs(q: number): number {
    if (this.answered?.[0] === q) return this.answered[1];
    const indices = [...this.buckets.keys()].sort((a, b) => a - b);
    let atRisk = this.weight;
    let survival = 1;
    const answeredBy = indices.map((index) => {
      const [weight, censoredShare] = this.buckets.get(index) as Bucket;
      const answers = weight * (1 - censoredShare);
      if (answers > 0) survival *= 1 - answers / atRisk;
      atRisk -= weight;
      return 1 - survival;
    });
    const at = answeredBy.findIndex((share) => share >= q * (1 - survival) - 1e-12);
    this.answered = [q, survival < 1 && at >= 0 ? valueOf(indices[at] as number) : Number.NaN];
    return this.answered[1];
  }

  toJSON(): SketchJSON {
    return { buckets: [...this.buckets].map(([index, bucket]) => [index, bucket[0]]), atMs: this.atMs };
  }

  /** Replaces the contents (validated by the caller: integer indices, finite weights > 0), all of them answers. */
  load(json: SketchJSON): void {
    this.buckets = new Map(json.buckets.map(([index, weight]) => [index, [weight, 0]]));
    this.atMs = json.atMs;
    this.cached = this.answered = undefined;
    while (this.buckets.size > MAX_BUCKETS) this.dropLightest();
  }

  private decayTo(nowMs: number, halfLifeMs: number): void {
    const elapsedMs = nowMs - this.atMs;
    if (elapsedMs <= 0) return;
    const factor = 2 ** (-elapsedMs / halfLifeMs);
    for (const [index, bucket] of this.buckets) {
      bucket[0] *= factor;
      if (bucket[0] < NEGLIGIBLE_WEIGHT) this.buckets.delete(index);
    }
    this.cached = this.answered = undefined;
    this.atMs = nowMs;
  }

  private dropLightest(): void {
    let lightest: [number, Bucket] | undefined;
    for (const entry of this.buckets) {
      if (lightest === undefined || entry[1][0] < lightest[1][0]) lightest = entry;
    }
    if (lightest !== undefined) this.buckets.delete(lightest[0]);
    this.cached = this.answered = undefined;
  }
}

/** The bucket of a value (ms): ceil(log_γ(value)). */
export function bucketOf(valueMs: number): number {
  return Math.ceil(Math.log(Math.max(MIN_VALUE_MS, valueMs)) / LOG_GAMMA);
}

/** A bucket's representative value (ms), within α of every value in it. */
export function valueOf(index: number): number {
  return (2 * GAMMA ** index) / (GAMMA + 1);
}

/** The smallest value whose cumulative weight reaches q (weights sum to 1); NaN when empty. */
export function weightedQuantile({ valuesMs, weights }: WeightedSamples, q: number): number {
  let cumulative = 0;
  for (let i = 0; i < valuesMs.length; i++) {
    cumulative += weights[i] as number;
    if (cumulative >= q - 1e-12) return valuesMs[i] as number;
  }
  return valuesMs.at(-1) ?? Number.NaN;
}
