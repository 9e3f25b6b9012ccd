/**
 * A server's body throughput (bytes/ms): a ratio of time-decayed sums, Σ w·bytes / Σ w·ms,
 * with w = 2^(−age / halfLife) as in the latency sketch. A ratio of sums weighs long
 * transfers most, which time the link best; small bodies are left out by the caller.
 * Body time is responseStart → responseEnd (Resource Timing), so the first byte is not in it.
 *
 * A new sample's share of the sums (by its bytes, Σ w·bytes) is at least:
 * - 1 − 2^(−gap / halfLife), gap the time without news before its exchange began: Finagle's
 *   EWMA update (cost·w + rtt·(1 − w), w = e^(−Δt/τ), PeakEwma.scala), as in the latency
 *   sketch. Without it one refresh of a server not in use for a while weighed no more than
 *   its last body, and a 32 KiB refresh against an old 500 KB body almost nothing;
 * - SLOWER_SAMPLE_SHARE when the body came at less than 1 / SLOWER_FACTOR of the estimate:
 *   peak-EWMA's "quick to react to latency spikes" (PeakEwma.scala takes a slower sample
 *   whole), so that a link that turns slow is seen at its first large body, not after
 *   seconds of them (a 500 KB body at a fifth of the old rate moved the estimate by ~10 %).
 */
/** A body this many times slower than the estimate is news of a slower link. */
const SLOWER_FACTOR = 1.5;
/** Its least share of the estimate (by bytes): the estimate moves most of the way at once. */
const SLOWER_SAMPLE_SHARE = 0.75;

/** A censored sample (addAtMost) is entered at no less than the estimate over this. */
const CENSORED_MAX_DROP = 4;

export interface ThroughputJSON {
  bytes: number;
  ms: number;
  atMs: number;
}

export class ThroughputEstimate {
  private bytes = 0;
  private ms = 0;
  private atMs = 0;

  /** A body of bodyBytes in bodyMs, complete at nowMs, on an exchange sent at sentAtMs. */
  add(bodyBytes: number, bodyMs: number, nowMs: number, halfLifeMs: number, sentAtMs = nowMs - bodyMs): 'slower' | undefined {
    // A body in under 1 ms is timed as 1 ms: the clock's resolution, not an infinite rate.
    return this.enter(bodyBytes, Math.max(1, bodyMs), nowMs, halfLifeMs, sentAtMs);
  }

  /**
   * A body still running, bodyBytes not all there after bodyMs (now nowMs), so the link was at
   * most bodyBytes / bodyMs fast (a right-censored sample). It teaches only where it contradicts
   * the estimate, and then at its bound, a lower bound of the time it cost, as the latency sketch
   * enters a timeout at its value (Kaplan and Meier, JASA 1958: a censored observation says only
   * that the event came later). A bound above the estimate, or with none known, says nothing the
   * estimate does not. And one such body cannot tell a slower link from a stall of the server's
   * heavy tail (a 36 KB body on a 10 MB/s link, bought away after a 220 ms stall, bounds the link
   * at 160 B/ms): it is entered at no less than the estimate over CENSORED_MAX_DROP. A link slower
   * still is seen at its next bodies, or at a complete one (which has no such limit).
   */
  addAtMost(bodyBytes: number, bodyMs: number, nowMs: number, halfLifeMs: number): 'slower' | undefined {
    const rate = this.bytesPerMs();
    const ms = Math.max(1, bodyMs);
    return rate! > bodyBytes / ms ? this.enter(bodyBytes, Math.min(ms, (CENSORED_MAX_DROP * bodyBytes) / rate!), nowMs, halfLifeMs, nowMs - bodyMs) : undefined;
  }

  /** A sample of bodyBytes in ms (≥ 1), entered with its share (above). */
  private enter(bodyBytes: number, ms: number, nowMs: number, halfLifeMs: number, sentAtMs: number): 'slower' | undefined {
    const rate = this.bytesPerMs();
    let decay = this.atMs === 0 ? 0 : 2 ** (-Math.max(0, nowMs - this.atMs) / halfLifeMs);
    const gapMs = Math.min(nowMs, sentAtMs) - this.atMs;
    let share = this.atMs > 0 && gapMs > 0 ? 1 - 2 ** (-gapMs / halfLifeMs) : 0;
    const slower = rate !== undefined && bodyBytes / ms < rate / SLOWER_FACTOR;
    if (slower) share = Math.max(share, SLOWER_SAMPLE_SHARE);
    // The share is by bytes, so that the estimate is a byte-weighted mean of ms per byte (what
    // a body's expected time multiplies): the past's bytes·decay may be at most
    // bytes_new·(1 − share)/share.
    if (share > 0 && this.bytes > 0) decay = Math.min(decay, (bodyBytes * (1 - share)) / (share * this.bytes));
    this.bytes = this.bytes * decay + bodyBytes;
    this.ms = this.ms * decay + ms;
    this.atMs = Math.max(this.atMs, nowMs);
    return slower ? 'slower' : undefined;
  }

  /** bytes/ms, or undefined before any sample. */
  bytesPerMs(): number | undefined {
    return this.ms > 0 && this.bytes > 0 ? this.bytes / this.ms : undefined;
  }

  toJSON(): ThroughputJSON {
    return { bytes: this.bytes, ms: this.ms, atMs: this.atMs };
  }

  load(json: ThroughputJSON): void {
    this.bytes = json.bytes;
    this.ms = json.ms;
    this.atMs = json.atMs;
  }
}
