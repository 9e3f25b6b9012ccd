/**
 * A server's own service time, as it pushes it to clients (shared by the origin and the
 * simulator) (Fei, Bhattacharjee, Zegura and
 * Ammar, "A Novel Server Selection Technique for Improving the Response Time of a Replicated
 * Service", INFOCOM 1998, Section 4 "Server Push Algorithm" and footnote 3).
 *
 * A sample is the time from a request's arrival to its response head, so it includes the
 * time the request queued inside the server (Fei measure "the time from just after the
 * server assigns the process until just before the server does the first read"; our
 * concurrency gate queues before that point, so its wait counts too).
 *
 * Smoothing (footnote 3): samples are averaged over intervals of length I; at the end of
 * interval i, P_i = α·avg_i + (1 − α)·P_{i−1}. An interval without a request has no queue,
 * so its avg is the unloaded service time: an EWMA (weight α) of the samples of requests
 * that arrived while the server had no other request in flight. Without that, a server that
 * everyone left would keep its old, loaded value for ever.
 *
 * Threshold and decay (the ARPANET link-state update rule Fei adopt, Section 4): a current
 * threshold C starts at T. At the end of each interval, when P differs from the value pushed
 * last by at least C (relative to that value), P is pushed and C is reset to T; otherwise C
 * is reduced by R, and when C reaches 0 P is pushed anyway. So the pushed value moves in
 * steps, at most once per I and at least once per (T/R)·I.
 *
 * Pure: the clock is passed in; intervals are closed lazily when a sample or a read comes.
 */

export interface ServiceTimePushOptions {
  /** I: the measurement interval. */
  intervalMs: number;
  /** α: weight of the newest interval average in P (Fei footnote 3: 0.9). */
  smoothing: number;
  /** T: the largest change threshold, relative to the value pushed last (0.1 = 10 %). */
  threshold: number;
  /** R: how much C shrinks after each interval without a push. */
  thresholdDecay: number;
  /** Changes are relative to max(pushed value, floorMs), so that sub-millisecond values do not flap. */
  floorMs: number;
}

export interface PushedServiceTime {
  /** The value pushed last (ms). */
  serviceMs: number;
  /** When it was pushed (the clock's ms). */
  atMs: number;
}

/** C − R at or below this is 0 (0.1 − 5 × 0.02 is not exactly 0 in floating point). */
const THRESHOLD_EPSILON = 1e-9;

/** Closing more intervals than this at once (a long idle spell) changes nothing more. */
const MAX_CLOSED_INTERVALS = 10_000;

export class ServiceTimePush {
  private intervalStartMs: number | undefined;
  private sumMs = 0;
  private count = 0;
  /** P_i (undefined before the first sample). */
  private smoothedMs: number | undefined;
  private pushed: PushedServiceTime | undefined;
  private currentThreshold: number;
  /** EWMA of samples of requests that met an idle server. */
  private unloadedMs: number | undefined;
  /** How many times a value was pushed (the first sample included). */
  pushes = 0;

  constructor(private readonly options: ServiceTimePushOptions) {
    if (!(options.intervalMs > 0)) throw new RangeError('intervalMs must be > 0');
    if (!(options.smoothing > 0 && options.smoothing <= 1)) throw new RangeError('smoothing must be in (0, 1]');
    if (!(options.threshold >= 0)) throw new RangeError('threshold must be >= 0');
    if (!(options.thresholdDecay > 0)) throw new RangeError('thresholdDecay must be > 0');
    if (!(options.floorMs > 0)) throw new RangeError('floorMs must be > 0');
    this.currentThreshold = options.threshold;
  }

  /**
   * One request's service time (arrival → response head), measured at `nowMs`; `unloaded`:
   * it arrived while no other request was in flight.
   */
  record(serviceMs: number, nowMs: number, unloaded = false): void {
    if (!Number.isFinite(serviceMs) || serviceMs < 0) return;
    if (this.intervalStartMs === undefined) {
      // The very first sample is pushed at once: a new server has nothing better to say.
      this.intervalStartMs = nowMs;
      this.smoothedMs = serviceMs;
      this.push(serviceMs, nowMs);
    }
    this.closeIntervals(nowMs);
    this.sumMs += serviceMs;
    this.count += 1;
    if (unloaded) {
      const alpha = this.options.smoothing;
      this.unloadedMs = this.unloadedMs === undefined ? serviceMs : alpha * serviceMs + (1 - alpha) * this.unloadedMs;
    }
  }

  /** The value to push now (undefined before the first request). */
  current(nowMs: number): PushedServiceTime | undefined {
    this.closeIntervals(nowMs);
    return this.pushed;
  }

  /** P, the smoothed value the push rule watches (for statistics). */
  smoothed(nowMs: number): number | undefined {
    this.closeIntervals(nowMs);
    return this.smoothedMs;
  }

  private closeIntervals(nowMs: number): void {
    let startMs = this.intervalStartMs;
    if (startMs === undefined) return;
    const { intervalMs } = this.options;
    let closed = 0;
    while (nowMs >= startMs + intervalMs) {
      if (closed >= MAX_CLOSED_INTERVALS) {
        // A long idle spell: nothing changes any more; skip to the interval holding nowMs.
        startMs = nowMs - ((nowMs - startMs) % intervalMs);
        break;
      }
      startMs += intervalMs;
      this.closeInterval(startMs);
      closed += 1;
    }
    this.intervalStartMs = startMs;
  }

  private closeInterval(endMs: number): void {
    const { smoothing, threshold, thresholdDecay, floorMs } = this.options;
    const averageMs = this.count > 0 ? this.sumMs / this.count : (this.unloadedMs ?? this.smoothedMs ?? 0);
    this.sumMs = 0;
    this.count = 0;
    // Fei footnote 3: P_i = α·avg_i + (1 − α)·P_{i−1}.
    const smoothed = smoothing * averageMs + (1 - smoothing) * (this.smoothedMs ?? averageMs);
    this.smoothedMs = smoothed;
    const last = this.pushed?.serviceMs ?? 0;
    const change = Math.abs(smoothed - last) / Math.max(last, floorMs);
    // Fei Section 4: push when the change reaches C (C = T again), else C ← C − R; C ≤ 0 pushes.
    if (change >= this.currentThreshold || this.currentThreshold - thresholdDecay <= THRESHOLD_EPSILON) {
      this.push(smoothed, endMs);
      this.currentThreshold = threshold;
    } else {
      this.currentThreshold -= thresholdDecay;
    }
  }

  private push(serviceMs: number, atMs: number): void {
    this.pushed = { serviceMs, atMs };
    this.pushes += 1;
  }
}
