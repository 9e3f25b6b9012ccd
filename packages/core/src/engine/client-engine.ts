/**
 * The client engine of Web++: one policy, one driver, and the stages of a request in the
 * order a reader follows them — plan (the policy's attempts for the candidates), attempt
 * (run-attempts.ts: timeouts, hedges, failover, deadline, fallback), serve (the driver hands
 * the winner to the page), learn (every sample to the policy) — then the background
 * requests the policy wants (maintenance.ts). The worker (sw/) drives it with fetch and real
 * timers, the simulator (packages/simulator) with a virtual clock: one state machine.
 */
import type { ServerId } from '../types.js';
import { BackgroundRequests } from './maintenance.js';
import type { ClientPolicy, ExchangeSample, PlanInput } from './policy-types.js';
import { runAttempts } from './run-attempts.js';
import type { Cancel, EngineAttempt, EngineHooks, EngineIO, RunResult } from './engine-io.js';
import { safe } from './safe-hook.js';

export interface ClientEngineOptions<R, C = unknown> {
  policy: ClientPolicy;
  io: EngineIO<R, C>;
  hooks?: EngineHooks;
  /** A resource known on the server, for its refreshes and probes; undefined: none known. */
  backgroundTarget(server: ServerId): string | undefined;
  /** Timeout of a refresh or probe whose policy set none. Default 5000 ms. */
  backgroundTimeoutMs?: number;
}

export interface RunOptions<C = unknown> {
  /** The driver's context, handed to every send of this run (the page's Request in the worker). */
  context?: C;
  /** 'request' for the page's request; 'resume' for the rest of a body that broke off. */
  purpose?: 'request' | 'resume';
  /** The winner's body broke off (or froze) after it was served: resume from remainingPlan(). */
  onBodyBroken?(server: ServerId): void;
  /** The winner's body arrived whole (drivers that follow bodies, e.g. the simulator). */
  onBodyComplete?(server: ServerId): void;
}

/** Failure outcomes: after them the server is not asked again within the same request. */
const FAILURES = new Set<ExchangeSample['outcome']>(['timeout', 'network-error', 'server-error', 'cut-mid-body']);

export class ClientEngine<R, C = unknown> {
  readonly policy: ClientPolicy;
  private readonly io: EngineIO<R, C>;
  private readonly hooks: EngineHooks | undefined;
  private readonly background: BackgroundRequests<R, C>;

  constructor(options: ClientEngineOptions<R, C>) {
    this.policy = options.policy;
    this.io = options.io;
    this.hooks = options.hooks;
    this.background = new BackgroundRequests({
      io: options.io,
      policy: options.policy,
      learn: (sample) => this.observe(sample),
      targetOf: options.backgroundTarget,
      timeoutMs: options.backgroundTimeoutMs ?? 5_000,
      hooks: options.hooks,
    });
  }

  now(): number {
    return this.io.now();
  }

  /**
   * Plan: the policy's attempts, kept to the candidates the driver can reach (`targetOf`),
   * one per server. `demote`: servers that go last whatever the policy says (the worker's
   * stale bindings).
   */
  plan(input: Omit<PlanInput, 'nowMs'>, targetOf: (server: ServerId) => string | undefined, demote?: (server: ServerId) => boolean): EngineAttempt[] {
    const planned = this.policy.plan({ ...input, nowMs: this.io.now() });
    const seen = new Set<ServerId>();
    const first: EngineAttempt[] = [];
    const last: EngineAttempt[] = [];
    for (const attempt of planned) {
      const target = targetOf(attempt.server);
      if (target === undefined || seen.has(attempt.server)) continue;
      seen.add(attempt.server);
      (demote?.(attempt.server) ? last : first).push({ ...attempt, target });
    }
    const plan = [...first, ...last];
    safe(() => this.hooks?.planned?.({ logicalUrl: input.logicalUrl, plan }));
    return plan;
  }

  /** Attempt: runs the plan; `done` gets the result once. Returns a cancel (the page's abort). */
  run(plan: readonly EngineAttempt[], done: (result: RunResult<R>) => void, options: RunOptions<C> = {}): Cancel {
    const { policy } = this;
    return runAttempts(
      plan,
      {
        io: this.io,
        purpose: options.purpose ?? 'request',
        winOn: policy.winOn ?? 'head',
        learn: (sample) => this.observe(sample),
        ...(policy.onServerFailed
          ? { watchServerFailure: (server: ServerId, onFailed: () => void) => policy.onServerFailed!((failed) => failed === server && onFailed()) }
          : {}),
        ...(policy.admitHedge ? { admitHedge: (server: ServerId, nowMs: number) => policy.admitHedge!(server, nowMs) } : {}),
        ...(this.hooks ? { hooks: this.hooks } : {}),
        ...(options.context === undefined ? {} : { context: options.context }),
        ...(options.onBodyBroken ? { onBodyBroken: options.onBodyBroken } : {}),
        ...(options.onBodyComplete ? { onBodyComplete: options.onBodyComplete } : {}),
      },
      done,
    );
  }

  /** What is left of a plan for a resume: the servers not excluded, in the plan's order, hedges dropped. */
  remainingPlan(plan: readonly EngineAttempt[], exclude: ReadonlySet<ServerId>): EngineAttempt[] {
    return plan.filter((attempt) => !exclude.has(attempt.server));
  }

  /**
   * Learn: one sample to the policy (the engine's own, and the ones a driver measures
   * itself, such as the worker's Resource Timing samples).
   */
  observe(sample: ExchangeSample): void {
    const hooks = this.hooks;
    safe(() => hooks?.sampleWillBeObserved?.(sample));
    const wasFailed = hooks?.sampleObserved ? this.isFailed(sample.server, sample.nowMs) : false;
    this.policy.observe(sample);
    safe(() => hooks?.sampleObserved?.(sample, wasFailed));
  }

  /** After a request: the refreshes and probes the policy wants; `settled` once they all ended. */
  maintain(candidates: readonly ServerId[], settled?: () => void): void {
    this.background.run(candidates, settled);
  }

  /** Background requests in flight (per server). */
  get backgroundInFlight(): ReadonlySet<ServerId> {
    return this.background.pending;
  }

  /** Stops the maintenance timer. */
  stop(): void {
    this.background.stop();
  }

  /** True when the outcome marks a server failed. */
  static isFailure(outcome: ExchangeSample['outcome']): boolean {
    return FAILURES.has(outcome);
  }

  private isFailed(server: ServerId, nowMs: number): boolean {
    return this.policy.describe(nowMs).some((view) => view.server === server && view.state === 'failed');
  }
}

