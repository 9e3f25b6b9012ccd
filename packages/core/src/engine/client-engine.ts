/**
 * The client engine of Web++: one policy, one driver, and the stages of a request in the
 * order a reader follows them — plan (the policy's attempts for the candidates), attempt
 * (run-attempts.ts: timeouts, hedges, failover, deadline, fallback), serve (the driver hands
 * the winner to the page), learn (every sample to the policy) — then the background
 * requests the policy wants (maintenance.ts). The worker (sw/) drives it with fetch and real
 * timers, the simulator (packages/simulator) with a virtual clock: one state machine.
 */
import type { ServerId } from '../types.js';
import { InFlightLedger } from './in-flight.js';
import { HoldQueue } from './late-binding.js';
import { BackgroundRequests } from './maintenance.js';
import type { BackgroundRequest, ClientPolicy, ExchangeSample, InFlightExchange, PlanInput } from './policy-types.js';
import { runAttempts } from './run-attempts.js';
import type { RunContext } from './run-attempts.js';
import type { Cancel, EngineAttempt, EngineHooks, EngineIO, RunResult } from './engine-io.js';
import { safe } from './safe-hook.js';

export interface ClientEngineOptions<R, C = unknown> {
  policy: ClientPolicy;
  io: EngineIO<R, C>;
  hooks?: EngineHooks;
  /**
   * A resource known on the server, for its refreshes and probes (the request says which: a
   * ranged GET wants a resource of at least rangeBytes); undefined: none known.
   */
  backgroundTarget: (server: ServerId, request: BackgroundRequest) => string | undefined;
  /** Timeout of a refresh or probe whose policy set none. Default 5000 ms. */
  backgroundTimeoutMs?: number;
  /**
   * How many exchanges the driver's transport sends to a server at once: a browser over
   * HTTP/1.1 opens 6 connections per host and queues the rest; undefined for a server without
   * such a limit (HTTP/2). An attempt's timeout then starts when it could have left the
   * browser, not while it waits behind the client's own exchanges (the ledger, in-flight.ts).
   * Absent: timeouts start at the send.
   */
  connectionsPerServer?: (server: ServerId) => number | undefined;
  /**
   * Late binding (late-binding.ts) for a policy that binds late (ClientPolicy.bindsLate).
   * Default true. A driver that cannot tell the engine when its exchanges end (the ledger
   * frees held requests; the worker learns it from Resource Timing) turns it off: a held
   * request would otherwise wait for its fail-open timeout.
   */
  lateBinding?: boolean;
}

export interface RunOptions<C = unknown> {
  /** The driver's context, handed to every send of this run (the page's Request in the worker). */
  context?: C;
  /**
   * 'request' for the page's request; 'resume' for the rest of a body that broke off (each of
   * its exchanges is an extra request the policy charges as it learns it); 'hedge' for a fetch
   * the policy decided and paid for already (ClientPolicy.reconsiderAtHead): its exchanges are
   * not charged again.
   */
  purpose?: 'request' | 'resume' | 'hedge';
  /** The winner's body broke off (or froze) after it was served: resume from remainingPlan(plan, exclude). */
  onBodyBroken?: (server: ServerId) => void;
  /** The winner's body arrived whole (drivers that follow bodies, e.g. the simulator). */
  onBodyComplete?: (server: ServerId) => void;
  /** The body size the run expects (bytes), for the in-flight ledger; default: what plan() knew or estimated for this plan. */
  sizeBytes?: number;
  /**
   * false: no retry rounds for this run (ClientPolicy.retryAfterMs), it fails once every
   * attempt failed: for a driver with another answer then (the worker's offline copies, served
   * at once as stale-if-error, RFC 5861 §4). Default true.
   */
  retry?: boolean;
}

function withoutHedge(attempt: EngineAttempt): EngineAttempt {
  if (attempt.hedgeAfterMs === undefined) return attempt;
  const copy = { ...attempt };
  delete copy.hedgeAfterMs;
  return copy;
}

function holds(attempts: readonly EngineAttempt[], server: ServerId): boolean {
  for (const attempt of attempts) if (attempt.server === server) return true;
  return false;
}

/** Failure outcomes: after them the server is not asked again within the same request. */
const FAILURES = new Set<ExchangeSample['outcome']>(['timeout', 'network-error', 'server-error', 'cut-mid-body']);

export class ClientEngine<R, C = unknown> {
  readonly policy: ClientPolicy;
  private readonly io: EngineIO<R, C>;
  private readonly hooks: EngineHooks | undefined;
  private readonly background: BackgroundRequests<R, C>;
  /** This client's exchanges in flight per server (in-flight.ts): the queue every plan sees. */
  readonly inFlight = new InFlightLedger();
  /** The size each plan was made for (known or estimated), for the ledger. */
  private readonly planSizes = new WeakMap<readonly EngineAttempt[], number>();
  /** Late binding (late-binding.ts): requests held until a server they want can take them; only for a policy that binds late. */
  private readonly held: HoldQueue | undefined;
  /** Per plan of a page's request: the same request planned again (late binding), given the held requests ahead of it. */
  private readonly rebinders = new WeakMap<readonly EngineAttempt[], (ahead: readonly InFlightExchange[]) => EngineAttempt[]>();
  private readonly connectionsOf: ((server: ServerId) => number | undefined) | undefined;

  /** The parts of every run's context that do not change between runs (built once: the simulator runs millions). */
  private readonly shared: Omit<RunContext<R, C>, 'purpose' | 'context' | 'onBodyBroken' | 'onBodyComplete'>;

  constructor(options: ClientEngineOptions<R, C>) {
    const policy = options.policy;
    this.policy = policy;
    this.io = options.io;
    this.hooks = options.hooks;
    const learn = (sample: ExchangeSample): void => this.observe(sample);
    this.background = new BackgroundRequests({
      io: options.io,
      policy,
      learn,
      targetOf: options.backgroundTarget,
      timeoutMs: options.backgroundTimeoutMs ?? 5_000,
      hooks: options.hooks,
    });
    this.shared = {
      io: options.io,
      winOn: policy.winOn ?? 'head',
      learn,
      watchServerFailure: policy.onServerFailed
        ? (server: ServerId, onFailed: () => void) => policy.onServerFailed!((failed) => failed === server && onFailed())
        : undefined,
      admitHedge: policy.admitHedge ? (server: ServerId, nowMs: number) => policy.admitHedge!(server, nowMs) : undefined,
      admitFailover: policy.admitFailover ? (server: ServerId, nowMs: number) => policy.admitFailover!(server, nowMs) : undefined,
      connectionsOf: options.connectionsPerServer,
      retryAfterMs: policy.retryAfterMs ? (round: number, elapsedMs: number, servers: readonly ServerId[]) => policy.retryAfterMs!(round, elapsedMs, servers) : undefined,
      retryOrder: (plan: readonly EngineAttempt[]) => this.retryOrder(plan),
      hooks: options.hooks,
    };
    this.connectionsOf = options.connectionsPerServer;
    if (policy.bindsLate === true && options.lateBinding !== false) {
      const held = new HoldQueue({ now: () => options.io.now(), setTimer: (delayMs, run) => options.io.setTimer(delayMs, run), sendable: (plan) => this.sendable(plan) });
      this.held = held;
      this.inFlight.onEnded(() => held.wake());
    }
  }

  now(): number {
    return this.io.now();
  }

  /** Runs `run` after `delayMs` on the engine's clock and timers (the driver's own, e.g. a look again at a running body). */
  setTimer(delayMs: number, run: () => void): Cancel {
    return this.io.setTimer(delayMs, run);
  }

  /**
   * Plan: the policy's attempts, kept to the candidates the driver can reach (`targetOf`),
   * one per server. `demote`: servers that go last whatever the policy says (the worker's
   * stale bindings).
   */
  plan(input: Omit<PlanInput, 'nowMs'>, targetOf: (server: ServerId) => string | undefined, demote?: (server: ServerId) => boolean): EngineAttempt[] {
    const { policy } = this;
    const known = input.sizeBytes !== undefined && input.sizeBytes >= 0;
    // Unknown sizes (issue 22 §2): a size the driver knows teaches the policy's estimates; one it does not is estimated.
    if (known) policy.learnSize?.(input.logicalUrl, input.sizeBytes as number);
    const sizeBytes = known ? input.sizeBytes : policy.estimateSizeBytes?.(input.logicalUrl);
    const plan = this.planNow(input, targetOf, demote, sizeBytes, undefined);
    const hooks = this.hooks;
    if (hooks?.planned) safe(() => hooks.planned!({ logicalUrl: input.logicalUrl, plan }));
    return plan;
  }

  /**
   * The policy's plan now. `ahead`: a held request planned again (late binding), with the held
   * requests before it; undefined: a new request, behind every held one.
   */
  private planNow(input: Omit<PlanInput, 'nowMs'>, targetOf: (server: ServerId) => string | undefined, demote: ((server: ServerId) => boolean) | undefined, sizeBytes: number | undefined, ahead: readonly InFlightExchange[] | undefined): EngineAttempt[] {
    const nowMs = this.io.now();
    const queued = ahead ?? this.held?.queued() ?? [];
    const ledger = this.inFlight.snapshot(nowMs);
    const inFlight = queued.length === 0 ? ledger : [...ledger, ...queued];
    const planned = this.policy.plan({
      logicalUrl: input.logicalUrl,
      method: input.method,
      candidates: input.candidates,
      sizeBytes: input.sizeBytes,
      nowMs,
      ...(inFlight.length > 0 ? { inFlight } : {}),
      ...(input.preferred === undefined ? {} : { preferred: input.preferred }),
      ...(ahead === undefined ? {} : { rebind: true }),
    });
    const plan: EngineAttempt[] = [];
    let last: EngineAttempt[] | undefined;
    for (const attempt of planned) {
      const target = targetOf(attempt.server);
      if (target === undefined || holds(plan, attempt.server) || (last !== undefined && holds(last, attempt.server))) continue;
      const engineAttempt: EngineAttempt = { ...attempt, target };
      if (demote?.(attempt.server)) (last ??= []).push(engineAttempt);
      else plan.push(engineAttempt);
    }
    if (last) plan.push(...last);
    const fetchesBody = input.method.toUpperCase() !== 'HEAD';
    if (sizeBytes !== undefined && fetchesBody) this.planSizes.set(plan, sizeBytes);
    if (this.held !== undefined && fetchesBody) this.rebinders.set(plan, (before) => this.planNow(input, targetOf, demote, sizeBytes, before));
    return plan;
  }

  /**
   * Would the policy send this request to `server` alone first (ClientPolicy.isSoleFirstChoice)?
   * Synchronous, from the policy's memory; false when the policy cannot say.
   */
  isSoleFirstChoice(input: Omit<PlanInput, 'nowMs' | 'inFlight' | 'preferred'>, server: ServerId): boolean {
    const { policy } = this;
    if (policy.isSoleFirstChoice === undefined) return false;
    const nowMs = this.io.now();
    const inFlight = [...this.inFlight.snapshot(nowMs), ...(this.held?.queued() ?? [])];
    return policy.isSoleFirstChoice({ ...input, nowMs, ...(inFlight.length > 0 ? { inFlight } : {}) }, server);
  }

  /**
   * Attempt: runs the plan; `done` gets the result once. Returns a cancel (the page's abort).
   * A page's request whose first choice cannot take it yet is held and planned again when it
   * can be sent (late binding, late-binding.ts), for a policy that binds late.
   */
  run(plan: readonly EngineAttempt[], done: (result: RunResult<R>) => void, options: RunOptions<C> = {}): Cancel {
    const rebind = this.rebinders.get(plan);
    const held = this.held;
    if (held === undefined || rebind === undefined || (options.purpose ?? 'request') !== 'request') return this.start(plan, done, options);
    const ready = this.sendable(plan);
    if (ready !== undefined) return this.start(ready, done, options);
    let cancelRun: Cancel | undefined;
    let aborted = false;
    // Fail-open: held no longer than the first attempt's timeout (which counts the wait the policy expected) with no exchange ending.
    const dropHold = held.hold(plan, this.planSizes.get(plan) ?? 0, rebind, (fresh) => void (cancelRun = this.start(fresh, done, options)), plan[0]!.timeoutMs);
    return () => {
      if (cancelRun !== undefined) return cancelRun();
      if (aborted) return;
      aborted = true;
      dropHold();
      done({ kind: 'aborted', attempts: [] });
    };
  }

  private start(plan: readonly EngineAttempt[], done: (result: RunResult<R>) => void, options: RunOptions<C>): Cancel {
    const { shared } = this;
    const context: RunContext<R, C> = {
      io: shared.io,
      winOn: shared.winOn,
      learn: shared.learn,
      watchServerFailure: shared.watchServerFailure,
      admitHedge: shared.admitHedge,
      admitFailover: shared.admitFailover,
      connectionsOf: shared.connectionsOf,
      retryAfterMs: options.retry === false ? undefined : shared.retryAfterMs,
      retryOrder: shared.retryOrder,
      hooks: shared.hooks,
      purpose: options.purpose ?? 'request',
      context: options.context,
      onBodyBroken: options.onBodyBroken,
      onBodyComplete: options.onBodyComplete,
      inFlight: this.inFlight,
      sizeBytes: options.sizeBytes ?? this.planSizes.get(plan) ?? 0,
    };
    return runAttempts(plan, context, done);
  }

  /**
   * Learn: one sample to the policy (the engine's own, and the ones a driver measures
   * itself, such as the worker's Resource Timing samples).
   */
  observe(sample: ExchangeSample): void {
    const hooks = this.hooks;
    if (hooks?.sampleWillBeObserved) safe(() => hooks.sampleWillBeObserved!(sample));
    // Only a failure can change a server's state to failed: ask the policy only then.
    const wasFailed = hooks?.sampleObserved && FAILURES.has(sample.outcome) ? this.isFailed(sample.server, sample.nowMs) : false;
    this.policy.observe(sample);
    if (hooks?.sampleObserved) safe(() => hooks.sampleObserved!(sample, wasFailed));
  }

  /** After a request: the refreshes and probes the policy wants; `settled` once they all ended. */
  maintain(candidates: readonly ServerId[], settled?: () => void): void {
    this.background.run(candidates, settled);
  }

  /** Stops the maintenance timer. */
  stop(): void {
    this.background.stop();
    this.held?.stop();
  }

  /**
   * Late binding: `plan` as it may be sent now, or undefined when it must wait. The policy
   * names the attempt to send first (ClientPolicy.sendableAttempt: e.g. not a server never
   * measured that already has one of this client's exchanges), and that server must have a
   * free connection (connectionsPerServer). A plan of one server is sent as it is.
   */
  private sendable(plan: readonly EngineAttempt[]): readonly EngineAttempt[] | undefined {
    if (plan.length < 2) return plan;
    let index = 0;
    const { policy } = this;
    if (policy.sendableAttempt !== undefined && this.inFlight.size > 0) {
      const nowMs = this.io.now();
      const found = policy.sendableAttempt(plan.map((attempt) => attempt.server), this.inFlight.snapshot(nowMs), this.planSizes.get(plan) ?? 0, nowMs);
      if (found === undefined) return undefined;
      index = found;
    }
    const chosen = plan[index];
    if (chosen === undefined) return plan;
    const connections = this.connectionsOf?.(chosen.server);
    if (connections !== undefined && this.inFlight.count(chosen.server) >= connections) return undefined;
    if (index === 0) return plan;
    // Another server first: the plan's hedges were timed for its first, so the reordered plan walks its attempts one after another.
    const reordered = [chosen, ...plan.filter((attempt) => attempt !== chosen)].map(withoutHedge);
    const sizeBytes = this.planSizes.get(plan);
    if (sizeBytes !== undefined) this.planSizes.set(reordered, sizeBytes);
    return reordered;
  }

  /** True when the outcome marks a server failed. */
  static isFailure(outcome: ExchangeSample['outcome']): boolean {
    return FAILURES.has(outcome);
  }

  /** A retry round's order: the plan's servers not marked failed now, then the failed ones, each in the plan's order. */
  private retryOrder(plan: readonly EngineAttempt[]): EngineAttempt[] {
    const failed = new Set(this.policy.describe(this.io.now()).filter((view) => view.state === 'failed').map((view) => view.server));
    if (failed.size === 0) return [...plan];
    return [...plan.filter((attempt) => !failed.has(attempt.server)), ...plan.filter((attempt) => failed.has(attempt.server))];
  }

  private isFailed(server: ServerId, nowMs: number): boolean {
    return this.policy.describe(nowMs).some((view) => view.server === server && view.state === 'failed');
  }
}

/** What is left of a plan for a resume: the servers not excluded, in the plan's order (a function, not a method: the worker, which resumes by its own ranges, does not carry it). */
export function remainingPlan(plan: readonly EngineAttempt[], exclude: ReadonlySet<ServerId>): EngineAttempt[] {
  return plan.filter((attempt) => !exclude.has(attempt.server));
}
