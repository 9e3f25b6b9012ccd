/**
 * The simulator's driver of @webpp/core's client engine: the same state machine the worker
 * runs (plan → attempts → serve → learn → background requests), here on the event queue's
 * virtual clock and the simulated network. A policy is named from core's registry; nothing
 * about selection, timeouts, hedges or failover is decided in this file.
 */
import { ClientEngine, combineHooks, createPolicy, remainingPlan } from '@webpp/core';
import type { Cancel, ClientPolicy, EngineHooks, EngineIO, TablePolicy, Exchange as EngineExchange, ExchangeEvents, PolicyServerView } from '@webpp/core';
import type { TimerHandle } from './event-queue.js';
import type { ExchangeHandlers, ExchangePurpose } from './network.js';
import type { PushedValue } from './server-queue.js';
import type { CancelRequest, FailureReason, LogicalRequest, Policy, PolicyClient, PolicyEnvironment, RequestResult } from './policy.js';

/** Virtual time 0 maps to this engine-clock time, so the policy's times look like epoch times. */
export const ENGINE_EPOCH_MS = 1_000_000_000_000;

export interface EnginePolicySpec {
  /** Report name, e.g. "webpp-paper". */
  name: string;
  description: string;
  /** Name in core's policy registry, e.g. "paper". */
  policy: string;
  options?: Record<string, unknown>;
  /**
   * One policy and engine for all clients (paper Section 4.1: the latency table is shared
   * by the clients of one browser), or one per client (e.g. round-robin's own turn).
   * Default true.
   */
  shared?: boolean;
  /** Options for one client's policy (when not shared), over `options`. */
  clientOptions?(clientIndex: number): Record<string, unknown>;
  /**
   * When the served body breaks off (its server died, or its bytes stopped for longer than
   * the attempt's deadline), fetch the resource again from the rest of the plan, as the
   * worker resumes a body (sw/src/resumable-body.ts). Default true. The simulator sends
   * the whole body again; the worker asks only for the rest.
   */
  midBodyFailover?: boolean;
  /** More lifecycle callbacks on the engine (traces, tests). */
  hooks?: EngineHooks;
}

/** The context of one run: the logical request, and how many resumes it had. */
interface RunContext {
  request: LogicalRequest;
  resume: number;
}

export function enginePolicy(spec: EnginePolicySpec): Policy {
  const shared = spec.shared ?? true;
  // Validate the options now, as a policy constructor would.
  createPolicy(spec.policy, { random: Math.random, now: () => 0 }, spec.options);
  return {
    name: spec.name,
    description: spec.description,
    start(environment) {
      const engineFor = (clientIndex: number | undefined): ClientEngine<undefined, RunContext> => {
        const options = clientIndex === undefined ? spec.options : { ...spec.options, ...spec.clientOptions?.(clientIndex) };
        const random = environment.random(spec.name, ...(clientIndex === undefined ? ['shared'] : ['client', clientIndex]));
        const policy = createPolicy(spec.policy, { random, now: () => ENGINE_EPOCH_MS + environment.queue.now() }, options);
        if (!policy) throw new RangeError(`unknown policy "${spec.policy}"`);
        return newEngine(environment, policy, clientIndex ?? 'shared', spec.hooks);
      };
      const sharedEngine = shared ? engineFor(undefined) : undefined;
      return {
        client: (clientIndex) => new EngineClient(environment, sharedEngine ?? engineFor(clientIndex), spec.midBodyFailover ?? true),
      };
    },
  };
}

function newEngine(environment: PolicyEnvironment, policy: ClientPolicy, engineName: string | number, extraHooks?: EngineHooks): ClientEngine<undefined, RunContext> {
  const { queue, observer } = environment;
  let backgroundCount = 0;
  const table = (policy as Partial<TablePolicy>).table;
  // The paper's policies: one row of their table; others: their own description.
  const estimateOf = (server: string): Pick<PolicyServerView, 'sampleCount' | 'ttfbEstimateMs'> | undefined => {
    if (table) {
      const row = table.get(server);
      return row && { sampleCount: row.sampleCount, ttfbEstimateMs: row.meanMs };
    }
    return policy.describe(ENGINE_EPOCH_MS + queue.now()).find((view) => view.server === server);
  };
  const io: EngineIO<undefined, RunContext> = {
    now: () => ENGINE_EPOCH_MS + queue.now(),
    setTimer: (delayMs, run) => {
      const handle = queue.after(delayMs, run);
      return () => queue.cancel(handle);
    },
    send: (exchange, events, context) => sendExchange(environment, exchange, events, context, () => `${engineName}|${exchange.purpose}|${backgroundCount++}`, policy),
  };
  // The engine's timeouts start when an exchange could be served, not while it waits behind the
  // client's own: the policy's answer (ClientPolicy.exchangesAtOnce: the connections for the
  // protocol it learnt, or the server's own concurrency when lower), else the browser's
  // connections per host (connection-pool.ts: six under HTTP/1.1, none under h2).
  const connections = environment.network.pool?.connectionsPerHost;
  const exchangesAtOnce = policy.exchangesAtOnce?.bind(policy);
  const connectionsPerServer = exchangesAtOnce ?? (connections === undefined ? undefined : () => connections);
  return new ClientEngine({
    policy,
    io,
    backgroundTarget: (server) => server,
    ...(connectionsPerServer === undefined ? {} : { connectionsPerServer }),
    hooks: combineHooks({
      sampleWillBeObserved: (sample) => {
        // Paper Figure 5: |estimate − sample| / sample just before the sample is folded in.
        if (sample.outcome !== 'served' || sample.ttfbMs === undefined || !(sample.ttfbMs > 0)) return;
        const before = estimateOf(sample.server);
        if (before && before.sampleCount > 0 && before.ttfbEstimateMs !== undefined) {
          observer.predictionError(Math.abs(before.ttfbEstimateMs - sample.ttfbMs) / sample.ttfbMs);
        }
      },
      sampleObserved: (sample) => {
        if (ClientEngine.isFailure(sample.outcome) && sample.purpose !== 'probe') observer.markedFailed(sample.server, queue.now());
      },
    }, extraHooks),
  });
}

/** The wire purpose the simulator counts an exchange under. */
function purposeOf(exchange: EngineExchange): ExchangePurpose {
  switch (exchange.purpose) {
    case 'request':
      return (exchange.attemptIndex ?? 0) === 0 ? 'request' : 'retry';
    case 'hedge':
      return exchange.hedgeAfterMs === 0 ? 'parallel' : 'hedge';
    case 'resume':
      return 'retry';
    default:
      return exchange.purpose;
  }
}

/** One exchange on the simulated network, reported to the engine (a class: no closures per exchange). */
class SimulatedExchange implements ExchangeHandlers {
  private headAtMs = 0;

  /**
   * `requestStartMs`: when the request left the browser (onSent). Until then it waits for one
   * of the host's connections; the first byte is timed from there, as the worker times it:
   * responseStart − requestStart of its Resource Timing entry (sw/src/ttfb-sampler.ts; the
   * origin sends Timing-Allow-Origin), so the browser's own queue is not taken for the
   * server's latency. The engine prices that queue itself (queue-ahead.ts).
   */
  constructor(
    private readonly events: ExchangeEvents<undefined>,
    private requestStartMs: number,
    private readonly bodyBytes: number,
    private readonly policy: ClientPolicy,
    private readonly protocol: string | undefined,
  ) {}

  onSent(atMs: number): void {
    this.requestStartMs = atMs;
  }

  onFirstByte(atMs: number, pushed?: readonly PushedValue[], status = 200): void {
    this.headAtMs = atMs;
    // Server push (issue 13): the head's Server-Timing and webpp-load reach the policy before its sample, as in the worker.
    if (pushed !== undefined && this.policy.learnPushedServiceTime) {
      for (const value of pushed) this.policy.learnPushedServiceTime(value.server, value.serviceMs, ENGINE_EPOCH_MS + value.atMs, value.utilisation);
    }
    this.events.head({ status, ttfbMs: atMs - this.requestStartMs, response: undefined, ...(this.protocol === undefined ? {} : { protocol: this.protocol }) });
  }

  onComplete(atMs: number): void {
    this.events.bodyComplete({ bodyBytes: this.bodyBytes, bodyMs: atMs - this.headAtMs });
  }

  onError(): void {
    this.events.error();
  }

  onStall(atMs: number, resumesAtMs: number | null): void {
    this.events.stalled(resumesAtMs === null ? null : resumesAtMs - atMs);
  }
}

function sendExchange(
  environment: PolicyEnvironment,
  exchange: EngineExchange,
  events: ExchangeEvents<undefined>,
  context: RunContext | undefined,
  backgroundKey: () => string,
  policy: ClientPolicy,
): Cancel {
  const sizeBytes = context?.request.sizeBytes ?? 0;
  const bodyBytes = exchange.method === 'head' ? 0 : exchange.method === 'range' ? (exchange.rangeBytes ?? 0) : sizeBytes;
  // Common random numbers: a request's first try on a server draws the same luck under every policy.
  // A retry round's exchange is a new request with luck of its own (else a retry on a shedding server would be shed again, by the same draw).
  const runKey = context ? (context.resume === 0 ? context.request.key : `${context.request.key}#resume${context.resume}`) : backgroundKey();
  const key = exchange.retryRound === undefined ? runKey : `${runKey}#retry${exchange.retryRound}`;
  const handlers = new SimulatedExchange(events, environment.queue.now(), bodyBytes, policy, environment.protocol);
  const handle = environment.network.send(
    { server: exchange.server, method: exchange.method === 'head' ? 'HEAD' : 'GET', bodyBytes, key, purpose: purposeOf(exchange) },
    handlers,
  );
  return () => handle.cancel();
}

/** One simulated client: each logical request through the engine, resumed mid-body like the worker. */
class EngineClient implements PolicyClient {
  /** True once this client loaded the site's page (the first request). */
  private pageLoaded = false;

  constructor(
    private readonly environment: PolicyEnvironment,
    private readonly engine: ClientEngine<undefined, RunContext>,
    private readonly midBodyFailover: boolean,
  ) {}

  /**
   * The site's page that carries the bindings comes from the origin (the first listed
   * server) with its `webpp-load` header, as in the worker (sw/src/pushed-load.ts): with
   * server queues, a client knows the servers' pushed service times before its first request.
   */
  private loadPage(): void {
    this.pageLoaded = true;
    const { environment, engine } = this;
    const origin = environment.servers[0];
    const learn = engine.policy.learnPushedServiceTime?.bind(engine.policy);
    if (origin === undefined || learn === undefined) return;
    for (const value of environment.network.queues?.carriedBy(origin, environment.queue.now()) ?? []) learn(value.server, value.serviceMs, ENGINE_EPOCH_MS + value.atMs, value.utilisation);
  }

  request(request: LogicalRequest, done: (result: RequestResult) => void): CancelRequest {
    const { engine, environment } = this;
    const candidates = environment.servers;
    if (!this.pageLoaded) this.loadPage();
    const sizeBytes = request.sizeKnown === false ? {} : { sizeBytes: request.sizeBytes };
    const logicalUrl = request.url ?? `sim:${request.sizeBytes}`;
    const plan = engine.plan({ logicalUrl, method: 'GET', candidates, ...sizeBytes }, (server) => server);
    const broken = new Set<string>();
    let finished = false;
    let headServed = false;
    const cancels = new Set<Cancel>();
    /** The first body broke while a second fetch from the head still ran: what to do if that one fails too. */
    let pendingResume: (() => void) | undefined;
    /** The policy's next look at a body still running (decide again, deferred). */
    let recheck: TimerHandle | undefined;
    const stopRecheck = (): void => {
      if (recheck !== undefined) environment.queue.cancel(recheck);
      recheck = undefined;
    };
    const finish = (result: RequestResult): void => {
      if (finished) return;
      finished = true;
      stopRecheck();
      // A race started at the head (below): the body that lost stops.
      if (cancels.size > 1) for (const cancel of cancels) cancel();
      done(result);
    };
    let raced = false;
    /**
     * Decide again at the response head (core: ClientPolicy.reconsiderAtHead): with the size
     * known (Content-Length: the simulator's sizeBytes), a whole fetch elsewhere may beat the
     * rest of the body here; it then races, and the first complete body wins. The simulator
     * can wait (`deferrable`): when the policy says to look again later (a pace not known
     * yet, or a body running late), it asks again then, with the body's time so far.
     */
    const reconsider = (winner: string, ttfbMs: number | undefined, tried: ReadonlySet<string>): void => {
      if (raced || finished || engine.policy.reconsiderAtHead === undefined || ttfbMs === undefined) return;
      raced = true;
      const alternatives = plan.filter((attempt) => !tried.has(attempt.server)).map((attempt) => attempt.server);
      if (alternatives.length === 0) return;
      const headAtMs = engine.now();
      const ask = (): void => {
        recheck = undefined;
        if (finished) return;
        const nowMs = engine.now();
        const decision = engine.policy.reconsiderAtHead!({
          server: winner,
          logicalUrl,
          ttfbMs,
          contentLengthBytes: request.sizeBytes,
          alternatives,
          nowMs,
          inFlight: engine.inFlight.snapshot(nowMs),
          deferrable: true,
          bodyElapsedMs: nowMs - headAtMs,
        });
        if (decision === undefined) return;
        if ((decision.startAfterMs ?? 0) > 0) {
          recheck = environment.queue.after(decision.startAfterMs as number, ask);
          return;
        }
        const attempt = plan.find((candidate) => candidate.server === decision.server);
        if (attempt === undefined) return;
        // The second fetch lost (no head, or its body broke): if the first body broke meanwhile, resume now.
        const lost = (): void => {
          cancels.delete(cancel);
          if (cancels.size > 0 || pendingResume === undefined) return;
          const resume = pendingResume;
          pendingResume = undefined;
          resume();
        };
        const cancel = engine.run([{ ...attempt, hedgeAfterMs: undefined, reason: 'head-redecision' }], (result) => void (result.kind !== 'served' && lost()), {
          purpose: 'hedge',
          context: { request, resume: 1 },
          sizeBytes: request.sizeBytes,
          onBodyComplete: (server) => finish({ ok: true, server }),
          onBodyBroken: (server) => {
            broken.add(server);
            lost();
          },
        });
        cancels.add(cancel);
      };
      ask();
    };
    const run = (attempts: typeof plan, context: RunContext): void => {
      const cancel: Cancel = engine.run(
        attempts,
        (result) => {
          // The worker's maintenance runs once the response is handed over, after the head's
          // Content-Length reached the policy (its decision at the head): the same order here.
          const maintain = (): void => void (context.resume === 0 && engine.maintain(candidates));
          if (result.kind !== 'served') {
            maintain();
            return finish({ ok: false, failure: headServed ? 'cut-mid-body' : 'no-replica' });
          }
          headServed = true;
          if (engine.policy.winOn === 'body') {
            maintain();
            return finish({ ok: true, server: result.winner.server });
          }
          const won = result.attempts.find((record) => record.server === result.winner.server && record.outcome === 'served');
          if (context.resume === 0) reconsider(result.winner.server, won?.ttfbMs, new Set(result.attempts.map((record) => record.server)));
          maintain();
        },
        {
          purpose: context.resume === 0 ? 'request' : 'resume',
          context,
          onBodyComplete: (server) => {
            engine.policy.learnSize?.(logicalUrl, request.sizeBytes);
            finish({ ok: true, server });
          },
          onBodyBroken: (server) => {
            stopRecheck();
            broken.add(server);
            cancels.delete(cancel);
            const resume = (): void => {
              if (finished) return;
              const rest = remainingPlan(plan, broken);
              if (!this.midBodyFailover || rest.length === 0) return finish({ ok: false, failure: 'cut-mid-body' });
              run(rest, { request, resume: context.resume + 1 });
            };
            if (finished) return;
            // A race from the head still runs: it finishes the request, or resumes it if it fails too.
            if (cancels.size > 0) {
              pendingResume = resume;
              return;
            }
            resume();
          },
        },
      );
      cancels.add(cancel);
    };
    run(plan, { request, resume: 0 });
    return (): FailureReason | void => {
      finished = true;
      stopRecheck();
      for (const cancel of cancels) cancel();
      return headServed ? 'cut-mid-body' : undefined;
    };
  }
}
