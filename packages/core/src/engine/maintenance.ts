/**
 * Background requests (paper Section 4.1, Figure 4: the asynchronous refreshes and probes),
 * scheduled by the policy and sent by the engine: after every request, and when the
 * policy's nextMaintenanceAtMs comes (one timer). What each answer teaches goes to the
 * policy as a sample: a head below 500 is 'served' (the server is up), a 5xx is
 * 'server-error', no head within the timeout is 'timeout'. At most one background request
 * per server is in flight at a time. They never delay a page's request.
 */
import type { ServerId } from '../types.js';
import type { BackgroundRequest, ClientPolicy, ExchangeSample } from './policy-types.js';
import type { Cancel, EngineHooks, EngineIO, Exchange } from './engine-io.js';
import { safe } from './safe-hook.js';

export interface BackgroundOptions<R, C> {
  io: EngineIO<R, C>;
  policy: ClientPolicy;
  /** The learn stage (to the policy). */
  learn(sample: ExchangeSample): void;
  /** A resource the server is known to hold; undefined: none known, the request is skipped. */
  targetOf(server: ServerId, request: BackgroundRequest): string | undefined;
  /** Timeout of a background request whose policy gave none. */
  timeoutMs: number;
  hooks?: EngineHooks | undefined;
}

export class BackgroundRequests<R, C = unknown> {
  private readonly inFlight = new Set<ServerId>();
  private timer: Cancel | undefined;
  private timerAtMs = Infinity;

  constructor(private readonly options: BackgroundOptions<R, C>) {}

  /** Servers with a background request in flight. */
  get pending(): ReadonlySet<ServerId> {
    return this.inFlight;
  }

  /**
   * Sends what the policy wants now; `settled` runs once every request of this round ended
   * (at once when none was sent). Then sets the maintenance timer.
   */
  run(candidates: readonly ServerId[], settled?: () => void): void {
    const { policy, io } = this.options;
    const due = policy.maintenance?.({ candidates, inFlight: this.inFlight, nowMs: io.now() }) ?? [];
    let open = 1;
    const ended = (): void => {
      if (--open === 0) settled?.();
    };
    for (const request of due) {
      if (this.inFlight.has(request.server)) continue;
      const target = this.options.targetOf(request.server, request);
      if (target === undefined) continue;
      open++;
      this.send(request, target, ended);
    }
    this.schedule();
    ended();
  }

  /** Stops the maintenance timer (requests in flight finish). */
  stop(): void {
    this.timer?.();
    this.timer = undefined;
    this.timerAtMs = Infinity;
  }

  private schedule(): void {
    const { policy, io } = this.options;
    const nowMs = io.now();
    const atMs = policy.nextMaintenanceAtMs?.(nowMs);
    if (atMs === undefined || !Number.isFinite(atMs) || atMs >= this.timerAtMs) return;
    this.timer?.();
    this.timerAtMs = atMs;
    this.timer = io.setTimer(Math.max(0, atMs - nowMs), () => {
      this.timer = undefined;
      this.timerAtMs = Infinity;
      this.run([]);
    });
  }

  private send(request: BackgroundRequest, target: string, ended: () => void): void {
    const { io, hooks } = this.options;
    const exchange: Exchange = {
      server: request.server,
      target,
      purpose: request.purpose,
      method: request.method,
      ...(request.rangeBytes === undefined ? {} : { rangeBytes: request.rangeBytes }),
    };
    this.inFlight.add(request.server);
    const sentAtMs = io.now();
    let done = false;
    let head: { status: number; ttfbMs?: number } | undefined;
    const finish = (outcome: ExchangeSample['outcome'], extra: Partial<ExchangeSample> = {}, report = true): void => {
      if (done) return;
      done = true;
      timer();
      // An answered exchange ends on its own; only one that did not answer is aborted.
      if (outcome !== 'served') cancel();
      this.inFlight.delete(request.server);
      const sample: ExchangeSample = { server: request.server, purpose: request.purpose, outcome, nowMs: io.now(), ...extra };
      if (outcome !== 'served' && hooks?.fetchDidFail) safe(() => hooks.fetchDidFail!(exchange, outcome));
      if (report) this.options.learn(sample);
      const measured = head && sample.ttfbMs === undefined ? { ...sample, ttfbMs: io.now() - sentAtMs } : sample;
      if (hooks?.backgroundDidFinish) safe(() => hooks.backgroundDidFinish!(request, measured, target));
      ended();
    };
    if (hooks?.requestWillFetch) safe(() => hooks.requestWillFetch!(exchange));
    const timer = io.setTimer(request.timeoutMs ?? this.options.timeoutMs, () => finish('timeout'));
    let cancel: Cancel = () => undefined;
    cancel = io.send(exchange, {
      head: (answer) => {
        if (done || head) return;
        head = { status: answer.status, ...(answer.ttfbMs === undefined ? {} : { ttfbMs: answer.ttfbMs }) };
        if (hooks?.fetchDidSucceed) safe(() => hooks.fetchDidSucceed!(exchange, head!));
        const measured = answer.ttfbMs === undefined ? {} : { ttfbMs: answer.ttfbMs };
        if (answer.status >= 500) return finish('server-error', { ...measured, status: answer.status });
        // A HEAD is complete with its head; a ranged GET teaches throughput once its body is in.
        // Without ttfbMs the driver reports the sample itself (Resource Timing).
        if (request.method === 'head') finish('served', { ...measured, status: answer.status }, answer.ttfbMs !== undefined);
      },
      bodyComplete: (body) => {
        if (!head) return;
        finish('served', { ...(head.ttfbMs === undefined ? {} : { ttfbMs: head.ttfbMs }), status: head.status, ...body }, head.ttfbMs !== undefined);
      },
      stalled: () => undefined,
      error: () => (head ? finish('served', { status: head.status, ...(head.ttfbMs === undefined ? {} : { ttfbMs: head.ttfbMs }) }, head.ttfbMs !== undefined) : finish('network-error')),
    }, undefined);
    if (done) cancel();
  }
}

