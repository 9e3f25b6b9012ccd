/**
 * This server's utilisation: the busy share of its last full measurement interval I
 * (`serviceTimeIntervalMs`), in [0, 1] — the backend utilisation that gRPC's weighted round
 * robin balances on (gRFC A58, "application_utilization"). One meter per server, read by
 * two features: server push (issue 13; responses carry it as
 * `Server-Timing: webpp;dur=…;util=…`, peers forward it in `webpp-load`) and replication's
 * `utilisation` load metric (the `utilisation` of the peer load record, DCWS's load table).
 *
 *   u = max(ELU, slots)
 *
 * ELU: the event loop's busy share over the interval (Node's
 * `performance.eventLoopUtilization`, perf_hooks); a server saturated by CPU work shows it
 * near 1. slots: when the concurrency gate is on (`maxConcurrentRequests` > 0), the
 * time-average over the interval of (requests holding a slot / maxConcurrentRequests); a
 * server whose requests wait on I/O or a backend holds its slots with an idle event loop,
 * and only this share says it is full. The interval closes on a timer; a late tick (a
 * blocked loop) makes a longer interval, measured as it was.
 *
 * The event loop is the process's, not the server's: when several webpp servers run in one
 * process (tests, the e2e cluster, a multi-tenant host), none can tell its own share of it,
 * and each would push the others' work as its own. So ELU counts only while this meter is
 * the only one running in the process; otherwise u is the slots' share alone, and a server
 * without a concurrency limit pushes no `util` at all.
 */
import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import { ConcurrencyGate, type ConcurrencyGateOptions } from '../http/concurrency-gate.js';
import type { ResolvedOptions } from '../options.js';

/** The concurrency gate that also integrates its held slots over time (∫ active dt). */
export class MeteredConcurrencyGate extends ConcurrencyGate {
  readonly limit: number;
  private slotMs = 0;
  private sinceMs: number;

  constructor(
    options: ConcurrencyGateOptions,
    private readonly now: () => number = () => performance.now(),
  ) {
    super(options);
    this.limit = options.maxConcurrentRequests;
    this.sinceMs = now();
  }

  // `active` changes only in acquire (a free slot taken) and release (no waiter to hand it to).
  override acquire(): ReturnType<ConcurrencyGate['acquire']> {
    this.accumulate();
    return super.acquire();
  }

  override release(): void {
    this.accumulate();
    super.release();
  }

  /** Slot-milliseconds held since the previous call. */
  takeSlotMs(): number {
    this.accumulate();
    const slotMs = this.slotMs;
    this.slotMs = 0;
    return slotMs;
  }

  private accumulate(): void {
    const nowMs = this.now();
    this.slotMs += this.active * Math.max(0, nowMs - this.sinceMs);
    this.sinceMs = nowMs;
  }
}

export interface UtilisationMeterOptions {
  /** I: the measurement interval (ms). */
  intervalMs: number;
  /** The gate whose slot share counts (undefined: no concurrency limit). */
  gate?: Pick<MeteredConcurrencyGate, 'takeSlotMs' | 'limit'>;
  now?: () => number;
  eventLoopUtilization?: (current?: EventLoopUtilization, previous?: EventLoopUtilization) => EventLoopUtilization;
}

/** The meters running in this process (ELU is per process). */
const running = new Set<UtilisationMeter>();

export class UtilisationMeter {
  private readonly now: () => number;
  private readonly elu: NonNullable<UtilisationMeterOptions['eventLoopUtilization']>;
  private timer: NodeJS.Timeout | undefined;
  private since: EventLoopUtilization | undefined;
  private sinceMs = 0;
  private last: number | undefined;

  constructor(private readonly options: UtilisationMeterOptions) {
    if (!(options.intervalMs > 0)) throw new RangeError('intervalMs must be > 0');
    this.now = options.now ?? (() => performance.now());
    this.elu = options.eventLoopUtilization ?? ((current, previous) => performance.eventLoopUtilization(current, previous));
  }

  /** Opens the first interval and closes one every I. */
  start(): void {
    if (this.timer !== undefined) return;
    this.begin();
    running.add(this);
    this.timer = setInterval(() => this.closeInterval(), this.options.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    running.delete(this);
  }

  /** u of the last full interval (undefined before the first one closed). */
  current(): number | undefined {
    return this.last;
  }

  /** Ends the current interval: its u becomes current, and the next one opens. */
  closeInterval(): void {
    if (this.since === undefined) return;
    const elapsedMs = this.now() - this.sinceMs;
    if (!(elapsedMs > 0)) return;
    const ownsLoop = running.size <= 1;
    const loop = ownsLoop ? this.elu(this.elu(), this.since).utilization : undefined;
    const gate = this.options.gate;
    const slots = gate === undefined ? undefined : gate.takeSlotMs() / (gate.limit * elapsedMs);
    this.since = this.elu();
    this.sinceMs = this.now();
    const shares = [loop, slots].filter((share): share is number => share !== undefined && Number.isFinite(share));
    // No share this server can call its own: no value (not 0, which would claim it idle).
    this.last = shares.length === 0 ? undefined : Math.min(1, Math.max(0, ...shares));
  }

  private begin(): void {
    this.since = this.elu();
    this.sinceMs = this.now();
    this.options.gate?.takeSlotMs();
  }
}

/** The server's capacity and its meter, from the options: the gate exists only with a limit. */
export function createUtilisation(
  options: Pick<ResolvedOptions, 'maxConcurrentRequests' | 'maxQueuedRequests' | 'serviceTimeIntervalMs'>,
): { gate: MeteredConcurrencyGate | undefined; meter: UtilisationMeter } {
  const gate =
    options.maxConcurrentRequests > 0
      ? new MeteredConcurrencyGate({ maxConcurrentRequests: options.maxConcurrentRequests, maxQueuedRequests: options.maxQueuedRequests })
      : undefined;
  return { gate, meter: new UtilisationMeter({ intervalMs: options.serviceTimeIntervalMs, ...(gate === undefined ? {} : { gate }) }) };
}
