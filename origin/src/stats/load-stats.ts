/**
 * Load statistics per resource and in total (paper Section 2: "Web++ servers also keep
 * track of the load associated with their resources. The load statistics can be used by
 * user-supplied policies that determine when, where and which resource should be
 * replicated").
 *
 * For each resource: request count, bytes sent, request and byte rates, and this server's
 * own service time (time from request arrival to the end of the response) as an EWMA:
 *   s ← w·x + (1 − w)·s         (the same smoothing as the paper's eq. (2), weight w)
 * Rates are exponentially decayed counters with half-life h: at each event
 *   c ← c·2^(−Δt/h) + 1, and rate = c·ln 2 / h,
 * which is the event rate averaged over roughly the last h.
 * The number of tracked resources is bounded; the least recently requested is dropped.
 */

export interface LoadStatsOptions {
  /** w: weight of the newest service-time sample, in (0, 1]. */
  ewmaWeight: number;
  /** h: half-life of the rate estimators. */
  rateHalfLifeMs: number;
  /** Upper bound on resources tracked individually. */
  maxResources: number;
  clock?: () => number;
}

export interface ResourceLoad {
  resource: string;
  requests: number;
  bytes: number;
  requestsPerSecond: number;
  bytesPerSecond: number;
  serviceTimeEwmaMs: number;
  lastRequestAtMs: number;
  /** Size of the whole resource as last answered (a full body, or a range's total); absent until known. */
  sizeBytes?: number;
}

export interface LoadSnapshot {
  atMs: number;
  total: ResourceLoad;
  resources: ResourceLoad[];
}

class LoadCounter {
  requests = 0;
  bytes = 0;
  serviceTimeEwmaMs = 0;
  lastRequestAtMs = 0;
  sizeBytes: number | undefined;
  private decayedRequests = 0;
  private decayedBytes = 0;
  private decayedAtMs = 0;

  constructor(readonly resource: string) {}

  record(bytes: number, serviceTimeMs: number, nowMs: number, options: LoadStatsOptions, sizeBytes?: number): void {
    if (sizeBytes !== undefined) this.sizeBytes = sizeBytes;
    this.decayTo(nowMs, options.rateHalfLifeMs);
    this.decayedRequests += 1;
    this.decayedBytes += bytes;
    this.serviceTimeEwmaMs =
      this.requests === 0 ? serviceTimeMs : options.ewmaWeight * serviceTimeMs + (1 - options.ewmaWeight) * this.serviceTimeEwmaMs;
    this.requests += 1;
    this.bytes += bytes;
    this.lastRequestAtMs = nowMs;
  }

  snapshot(nowMs: number, halfLifeMs: number): ResourceLoad {
    const decay = nowMs > this.decayedAtMs ? 2 ** (-(nowMs - this.decayedAtMs) / halfLifeMs) : 1;
    const perSecond = (Math.LN2 / halfLifeMs) * 1000;
    return {
      resource: this.resource,
      requests: this.requests,
      bytes: this.bytes,
      requestsPerSecond: this.decayedRequests * decay * perSecond,
      bytesPerSecond: this.decayedBytes * decay * perSecond,
      serviceTimeEwmaMs: this.serviceTimeEwmaMs,
      lastRequestAtMs: this.lastRequestAtMs,
      ...(this.sizeBytes === undefined ? {} : { sizeBytes: this.sizeBytes }),
    };
  }

  private decayTo(nowMs: number, halfLifeMs: number): void {
    if (nowMs > this.decayedAtMs) {
      const decay = 2 ** (-(nowMs - this.decayedAtMs) / halfLifeMs);
      this.decayedRequests *= decay;
      this.decayedBytes *= decay;
      this.decayedAtMs = nowMs;
    }
  }
}

export class LoadStats {
  private readonly total = new LoadCounter('*');
  private readonly resources = new Map<string, LoadCounter>();
  private readonly clock: () => number;

  constructor(private readonly options: LoadStatsOptions) {
    if (!(options.ewmaWeight > 0 && options.ewmaWeight <= 1)) throw new RangeError('ewmaWeight must be in (0, 1]');
    if (!(options.rateHalfLifeMs > 0)) throw new RangeError('rateHalfLifeMs must be > 0');
    this.clock = options.clock ?? Date.now;
  }

  /** `bytes`: body bytes sent; `sizeBytes`: the whole resource's size when the response tells it (HEAD, 206, 304 send fewer bytes). */
  record(resource: string, bytes: number, serviceTimeMs: number, sizeBytes?: number): void {
    const nowMs = this.clock();
    this.total.record(bytes, serviceTimeMs, nowMs, this.options);
    let counter = this.resources.get(resource);
    if (counter === undefined) {
      counter = new LoadCounter(resource);
      if (this.resources.size >= this.options.maxResources) {
        const oldest = this.resources.keys().next().value;
        if (oldest !== undefined) this.resources.delete(oldest);
      }
    } else {
      this.resources.delete(resource); // re-inserted below: most recently requested last
    }
    this.resources.set(resource, counter);
    counter.record(bytes, serviceTimeMs, nowMs, this.options, sizeBytes);
  }

  /** Load of one resource, or undefined if it was never requested (or was evicted). */
  get(resource: string): ResourceLoad | undefined {
    return this.resources.get(resource)?.snapshot(this.clock(), this.options.rateHalfLifeMs);
  }

  /** Every tracked resource, busiest (by request rate) first. */
  snapshot(): LoadSnapshot {
    const nowMs = this.clock();
    const halfLife = this.options.rateHalfLifeMs;
    const resources = [...this.resources.values()].map((counter) => counter.snapshot(nowMs, halfLife));
    resources.sort((a, b) => b.requestsPerSecond - a.requestsPerSecond || (a.resource < b.resource ? -1 : 1));
    return { atMs: nowMs, total: this.total.snapshot(nowMs, halfLife), resources };
  }
}
