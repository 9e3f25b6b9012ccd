/**
 * Servers with finite capacity (issue 13): response time grows with the load a server
 * receives. Each server is an M/M/c queue with first-come-first-served order — Poisson-like
 * arrivals from many clients, exponential service times of mean 1/μ, c workers (Kendall's
 * notation; Kleinrock, "Queueing Systems, Volume 1: Theory", Wiley 1975, Section 3.5). It is
 * what the origin's concurrency limit does (maxConcurrentRequests = c, a FIFO queue behind
 * it): a request waits for a free worker, then is served. At utilisation ρ = λ / (c·μ) the
 * mean wait grows as ρ / (1 − ρ) for c = 1 (Kleinrock eq. 3.26) and without bound at ρ ≥ 1.
 *
 * FCFS with c workers is exact when arrivals are admitted in time order: the request takes
 * the worker that frees first, starts at max(arrival, its free time) and departs a service
 * time later. Every exchange is served, HEADs and hedges included (a server cannot tell a
 * probe from a page's request), and an exchange the client cancels still holds its worker.
 *
 * Each server also pushes its own service time (arrival → head, the wait included) with
 * Fei's interval smoothing and threshold-and-decay (core's ServiceTimePush, the origin's own
 * code), and relays its peers' pushed values with a lag (the origin's peer exchange).
 */
import { ServiceTimePush, type PushedServiceTime, type ServiceTimePushOptions } from '@webpp/core';
import type { RandomSource } from '@webpp/netem/model';

export interface ServerCapacity {
  /** c: requests served at once. */
  workers: number;
  /** 1/μ: the mean service time of one request on one worker (ms). */
  serviceMeanMs: number;
}

/** One server's pushed service time, as a response carries it. */
export interface PushedValue {
  server: string;
  serviceMs: number;
  /** When it was valid (virtual ms). */
  atMs: number;
  /** The server's busy share of its last full interval (Server-Timing's `util`), once it has one. */
  utilisation?: number;
}

export interface QueueingOptions {
  capacity: Readonly<Record<string, ServerCapacity>>;
  /** The push rule's parameters; the origin's defaults (origin/src/options/push-schema.ts) when absent. */
  push?: ServiceTimePushOptions;
  /** A peer's value reaches the other servers this long after it was pushed (ms). Default 1 000. */
  peerLagMs?: number;
  /** Width of the bins of the per-server load series (ms). Default 1 000. */
  loadBinMs?: number;
}

/** The origin's defaults: I = 1 s, α = 0.9, T = 0.1, R = 0.02, floor 1 ms. */
export const ORIGIN_PUSH_DEFAULTS: Readonly<ServiceTimePushOptions> = Object.freeze({ intervalMs: 1_000, smoothing: 0.9, threshold: 0.1, thresholdDecay: 0.02, floorMs: 1 });

export class ServerQueue {
  /** Exchanges that arrived in each bin of loadBinMs. */
  readonly arrivalsPerBin: number[] = [];
  private readonly freeAtMs: number[];
  private readonly push: ServiceTimePush;
  /** Every value pushed, oldest first (for the peers' lagged view). */
  private readonly pushes: PushedServiceTime[] = [];
  /** Worker-ms of service that started in each push interval (the utilisation it pushes). */
  private readonly busyMsPerInterval: number[] = [];
  private readonly intervalMs: number;

  constructor(
    readonly server: string,
    private readonly capacity: ServerCapacity,
    pushOptions: ServiceTimePushOptions,
    private readonly random: RandomSource,
    private readonly loadBinMs: number,
  ) {
    if (!(Number.isInteger(capacity.workers) && capacity.workers >= 1)) throw new RangeError(`server "${server}": workers must be an integer >= 1`);
    if (!(capacity.serviceMeanMs > 0)) throw new RangeError(`server "${server}": serviceMeanMs must be > 0`);
    this.freeAtMs = new Array<number>(capacity.workers).fill(0);
    this.push = new ServiceTimePush(pushOptions);
    this.intervalMs = pushOptions.intervalMs;
  }

  /** Admits a request arriving at `arrivalMs` (in time order); returns its time in the server (wait + service, ms). */
  admit(arrivalMs: number): number {
    let worker = 0;
    for (let i = 1; i < this.freeAtMs.length; i++) if ((this.freeAtMs[i] as number) < (this.freeAtMs[worker] as number)) worker = i;
    const freeAtMs = this.freeAtMs[worker] as number;
    const idle = this.freeAtMs.every((at) => at <= arrivalMs);
    // Exponential service time by inversion: −ln(1 − u) / μ.
    const serviceMs = -Math.log(1 - this.random()) * this.capacity.serviceMeanMs;
    const startMs = Math.max(arrivalMs, freeAtMs);
    const departureMs = startMs + serviceMs;
    const interval = Math.floor(startMs / this.intervalMs);
    while (this.busyMsPerInterval.length <= interval) this.busyMsPerInterval.push(0);
    this.busyMsPerInterval[interval] = (this.busyMsPerInterval[interval] as number) + serviceMs;
    this.freeAtMs[worker] = departureMs;
    const sojournMs = departureMs - arrivalMs;
    const bin = Math.floor(arrivalMs / this.loadBinMs);
    while (this.arrivalsPerBin.length <= bin) this.arrivalsPerBin.push(0);
    this.arrivalsPerBin[bin] = (this.arrivalsPerBin[bin] as number) + 1;
    // Recorded at arrival (its time in the server is known then under FCFS): within one push interval of the truth.
    this.push.record(sojournMs, arrivalMs, idle);
    const pushed = this.push.current(arrivalMs);
    if (pushed !== undefined && pushed.atMs !== this.pushes.at(-1)?.atMs) this.pushes.push(pushed);
    return sojournMs;
  }

  /** The value this server's responses carry now (Server-Timing), undefined before its first request. */
  ownValue(nowMs: number): PushedValue | undefined {
    const pushed = this.push.current(nowMs);
    return pushed === undefined ? undefined : this.valueOf(pushed, nowMs);
  }

  /**
   * The busy share of the workers over the last full push interval before `atMs`, as the
   * origin pushes its event-loop utilisation (Server-Timing `util`); undefined before one.
   */
  utilisationAt(atMs: number): number | undefined {
    const interval = Math.floor(atMs / this.intervalMs) - 1;
    if (interval < 0) return undefined;
    return Math.min(1, (this.busyMsPerInterval[interval] ?? 0) / (this.capacity.workers * this.intervalMs));
  }

  private valueOf(pushed: PushedServiceTime, atMs: number): PushedValue {
    const utilisation = this.utilisationAt(atMs);
    return utilisation === undefined ? { server: this.server, serviceMs: pushed.serviceMs, atMs } : { server: this.server, serviceMs: pushed.serviceMs, atMs, utilisation };
  }

  /** The value this server claimed at `atMs` (what a peer relays `lag` later), dated atMs. */
  valueAsOf(atMs: number): PushedValue | undefined {
    for (let i = this.pushes.length - 1; i >= 0; i--) {
      const pushed = this.pushes[i] as PushedServiceTime;
      // Still the server's claim at atMs: a value stands until the next push (threshold and decay).
      if (pushed.atMs <= atMs) return this.valueOf(pushed, atMs);
    }
    return undefined;
  }
}


/** Every server's queue, and what a response from one of them carries. */
export class ServerQueues {
  readonly loadBinMs: number;
  private readonly queues = new Map<string, ServerQueue>();
  private readonly peerLagMs: number;

  constructor(options: QueueingOptions, randomOf: (server: string) => RandomSource) {
    this.loadBinMs = options.loadBinMs ?? 1_000;
    this.peerLagMs = options.peerLagMs ?? 1_000;
    for (const [server, capacity] of Object.entries(options.capacity)) {
      this.queues.set(server, new ServerQueue(server, capacity, options.push ?? ORIGIN_PUSH_DEFAULTS, randomOf(server), this.loadBinMs));
    }
  }

  get(server: string): ServerQueue | undefined {
    return this.queues.get(server);
  }

  /** The server's own value (Server-Timing) and its peers' as it knows them (webpp-load). */
  carriedBy(server: string, nowMs: number): PushedValue[] {
    const values: PushedValue[] = [];
    for (const queue of this.queues.values()) {
      const value = queue.server === server ? queue.ownValue(nowMs) : queue.valueAsOf(nowMs - this.peerLagMs);
      if (value !== undefined) values.push(value);
    }
    return values;
  }

  /** Arrivals per bin for every server, padded to the same length. */
  loadSeries(): Record<string, number[]> {
    const length = Math.max(0, ...[...this.queues.values()].map((queue) => queue.arrivalsPerBin.length));
    return Object.fromEntries([...this.queues.values()].map((queue) => [queue.server, Array.from({ length }, (_, i) => queue.arrivalsPerBin[i] ?? 0)]));
  }
}
