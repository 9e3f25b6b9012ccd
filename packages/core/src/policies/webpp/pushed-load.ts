/**
 * Server push in the webpp policy (issue 13; Fei, Bhattacharjee, Zegura, Ammar, "A Novel
 * Server Selection Technique for Improving the Response Time of a Replicated Service",
 * INFOCOM 1998, Section 4.3, "A Hybrid Push/Probe Technique").
 *
 * A server pushes S, its own smoothed service time (queueing inside the server included).
 * From every response that carries both, the client keeps the server's network factor
 *
 *   A = R / S                                                     (Fei, Section 4.3)
 *
 * with R the client's own measured response time (here: time to first byte). Fei keeps the
 * A of the most recent probe; we keep a time-decayed geometric mean of R / S over the
 * responses (half-life estimateHalfLifeMs), since every response is a "probe" here and one
 * noisy R must not swing A. When a fresh S arrives for a server the client has not heard
 * from lately, its estimate becomes R(i) = A × S(i) at once (Fei: "the resolver estimates
 * the current response time as R(i) = A * S(i)").
 */
import type { ServerId } from '../../types.js';
import type { WebppOptions } from './options.js';

/** S below this counts as this (ms): the origin rounds to 0.1 ms, and R / 0 is no factor. */
const MIN_SERVICE_MS = 0.1;

/** A served sample not yet paired with an S (the S of the same response may come after it). */
interface UnpairedSample {
  ttfbMs: number;
  sentAtMs: number;
  nowMs: number;
}

/** What one server pushed, and the factor that calibrates it for this client. */
export class PushedLoad {
  /** The newest S (ms) and when it was valid (engine clock); undefined before any. */
  serviceMs: number | undefined;
  atMs = -Infinity;
  /** The server's utilisation (busy share, 0–1), as it pushed it with S; undefined when it did not. */
  utilisation: number | undefined;
  /** When the utilisation was valid: an S without one (learnResponse) does not make it fresher. */
  utilisationAtMs = -Infinity;
  /** Time-decayed sums of ln(R / S) and of their weights, decayed to decayedAtMs. */
  private logFactorSum = 0;
  private factorWeight = 0;
  private decayedAtMs = 0;
  private unpaired: UnpairedSample | undefined;
  /** The S of the newest pair (what the server claimed when the client last measured it). */
  private pairedServiceMs: number | undefined;
  private pairedAtMs = -Infinity;

  /** A = R / S (geometric mean of the pairs, time-decayed), or undefined before a pair. */
  factor(): number | undefined {
    return this.factorWeight > 0 ? Math.exp(this.logFactorSum / this.factorWeight) : undefined;
  }

  /**
   * A new S. Older than the one held: ignored (a relayed value may lag the server's own).
   * Pairs it with the last served sample when S was valid during that exchange.
   */
  learnService(serviceMs: number, atMs: number, options: WebppOptions, utilisation?: number): void {
    if (!(serviceMs >= 0) || !Number.isFinite(serviceMs) || !Number.isFinite(atMs) || atMs < this.atMs) return;
    this.serviceMs = serviceMs;
    this.atMs = atMs;
    // A value without it (a response's own Server-Timing read from Resource Timing) keeps the
    // one held, with its own date: busyShare ages it out after pushMaxAgeMs.
    if (utilisation !== undefined && utilisation >= 0 && utilisation <= 1) {
      this.utilisation = utilisation;
      this.utilisationAtMs = atMs;
    }
    const sample = this.unpaired;
    if (sample !== undefined && atMs >= sample.sentAtMs - options.pushPairSlackMs && atMs <= sample.nowMs + options.pushPairSlackMs) {
      this.unpaired = undefined;
      this.addPair(sample.ttfbMs, serviceMs, sample.nowMs, options);
    }
  }

  /**
   * A served sample's R. `serviceMs`: the S the same response carried, when the driver had
   * it; else the S that arrived during the exchange, or later (learnService pairs it then).
   */
  learnResponse(ttfbMs: number, sentAtMs: number, nowMs: number, serviceMs: number | undefined, options: WebppOptions): void {
    if (!(ttfbMs > 0) || !Number.isFinite(ttfbMs)) return;
    if (serviceMs !== undefined) {
      this.unpaired = undefined;
      this.learnService(serviceMs, nowMs, options);
      this.addPair(ttfbMs, serviceMs, nowMs, options);
      return;
    }
    if (this.serviceMs !== undefined && this.atMs >= sentAtMs - options.pushPairSlackMs && this.atMs <= nowMs + options.pushPairSlackMs) {
      this.unpaired = undefined;
      this.addPair(ttfbMs, this.serviceMs, nowMs, options);
      return;
    }
    this.unpaired = { ttfbMs, sentAtMs, nowMs };
  }

  /**
   * R(i) = A × S(i) when it should replace the client's own estimate: push is on, S is fresh
   * (pushed within pushMaxAgeMs), newer than the client's last own sample of the server by
   * more than pushAfterSilenceMs (the client has not heard from it lately), and A is known.
   */
  estimateMs(lastSampleAtMs: number, nowMs: number, options: WebppOptions): number | undefined {
    if (options.pushMaxAgeMs <= 0 || this.serviceMs === undefined) return undefined;
    if (nowMs - this.atMs > options.pushMaxAgeMs || this.atMs - lastSampleAtMs <= options.pushAfterSilenceMs) return undefined;
    const factor = this.factor();
    return factor === undefined ? undefined : factor * Math.max(MIN_SERVICE_MS, this.serviceMs);
  }

  /**
   * How much the server's queue grew (or shrank) since the client's own last measurement of
   * it: S_now − S_then, in ms, times pushSteerShare; 0 without a fresh S or a pair. Added
   * to the client's own estimate, it lets the pushed load steer every plan, not only after a
   * silence (Fei Section 4.3: the resolver's estimate follows each pushed S(i) between
   * probes). Additive rather than A × ΔS: R = network time + S, and the network part does
   * not grow with the queue (with A ≈ 10, A × ΔS overshot and the herd followed).
   */
  queueShiftMs(nowMs: number, options: WebppOptions): number {
    if (options.pushMaxAgeMs <= 0 || options.pushSteerShare <= 0 || this.serviceMs === undefined || this.pairedServiceMs === undefined) return 0;
    if (nowMs - this.atMs > options.pushMaxAgeMs || this.atMs <= this.pairedAtMs) return 0;
    return options.pushSteerShare * (this.serviceMs - this.pairedServiceMs);
  }

  /** The pushed utilisation (0–1) while fresh (pushMaxAgeMs); 0 without one or with push off. What load-spread.ts spreads by. */
  busyShare(nowMs: number, options: WebppOptions): number {
    if (options.pushMaxAgeMs <= 0 || this.utilisation === undefined || nowMs - this.utilisationAtMs > options.pushMaxAgeMs) return 0;
    return this.utilisation;
  }

  private addPair(ttfbMs: number, serviceMs: number, nowMs: number, options: WebppOptions): void {
    if (nowMs >= this.pairedAtMs) {
      this.pairedServiceMs = serviceMs;
      this.pairedAtMs = nowMs;
    }
    // Exponential time decay of the older pairs (the estimate's half-life, options.ts).
    const elapsedMs = Math.max(0, nowMs - this.decayedAtMs);
    const keep = 2 ** (-elapsedMs / options.estimateHalfLifeMs);
    // R includes S (the server's time is part of the response time), so R / S ≥ 1; a smaller
    // ratio means the smoothed S still lagged a queue that had drained: it counts as 1.
    this.logFactorSum = this.logFactorSum * keep + Math.log(Math.max(1, ttfbMs / Math.max(MIN_SERVICE_MS, serviceMs)));
    this.factorWeight = this.factorWeight * keep + 1;
    this.decayedAtMs = Math.max(this.decayedAtMs, nowMs);
  }
}

/** The push state of every server a policy has heard of. */
export class PushedLoads {
  private readonly byServer = new Map<ServerId, PushedLoad>();

  of(server: ServerId): PushedLoad {
    let load = this.byServer.get(server);
    if (load === undefined) {
      load = new PushedLoad();
      this.byServer.set(server, load);
    }
    return load;
  }

  get(server: ServerId): PushedLoad | undefined {
    return this.byServer.get(server);
  }
}
