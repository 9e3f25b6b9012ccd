/**
 * Why requests fail (issue 22, "0 failed requests"): runs webpp (and optimal-complete beside
 * it) on generated worlds, follows every exchange of every request that fails, and sorts each
 * failure by cause:
 *
 * - all-down: every replica was in an outage when the request gave up;
 * - own-queue: an attempt on a replica that was up timed out or was given up while it still
 *   waited for one of the browser's connections to that host (the client's own queue);
 * - gave-up-on-live: an attempt on a replica that was up (no outage during the exchange) was
 *   given up (its deadline, or a body idle timeout) although the replica would have answered;
 * - down-when-tried: every replica was tried and failed while down or shedding (5xx), and one
 *   was back before the request gave up (a retry after a backoff would have found it);
 * - not-tried: a replica that was up was never asked.
 *
 * A failed request is one runWorld counts (the generalization bench's `failed_requests`): the
 * policy reported it failed, or the page gave up on it (workload.requestTimeoutMs, "gave-up")
 * and cancelled it; the bench checks that its count is runWorld's.
 *
 *   npm run bench failed-requests                       # training seeds (1–300) only
 *   npm run bench failed-requests -- --seeds 38,66 -v   # some seeds, every failed request's exchanges
 *   npm run bench failed-requests -- --webpp-options '{"retryWindowMs":0}'   # webpp with other options
 *
 * Training seeds only unless --seeds names others: the held-out range is for reports.
 * Prints a table; writes nothing.
 */
import { compileScenario, generateWorld, seedsOf, TRAINING_SEEDS, type ServerTimeline } from '@webpp/netem/model';
import { enginePolicy, runWorld, type ExchangeHandlers, type Policy } from '@webpp/simulator';
import type { Exchange as EngineExchange, SampleOutcome } from '@webpp/core';

const args = process.argv.slice(2);
const option = (name: string): string | undefined => {
  const index = args.indexOf(name);
  return index >= 0 ? args[index + 1] : undefined;
};
const verbose = args.includes('-v');
const seeds = option('--seeds')?.split(',').map(Number) ?? seedsOf(TRAINING_SEEDS);
/** webpp's options (JSON), e.g. '{"retryWindowMs":0}' to see the failures without retry rounds. */
const webppOptions = JSON.parse(option('--webpp-options') ?? '{}') as Record<string, unknown>;

interface Trace {
  server: string;
  purpose: string;
  queuedAtMs: number;
  sentAtMs?: number;
  headAtMs?: number;
  status?: number;
  endAtMs?: number;
  end?: 'complete' | 'error' | 'cancelled';
  stalls: number;
  /** The engine's failure outcomes for this exchange (timeout, network-error, …), with whether it had left the browser then. */
  engine: Array<{ outcome: SampleOutcome; atMs: number; sent: boolean }>;
}

type Cause = 'all-down' | 'own-queue' | 'gave-up-on-live' | 'down-when-tried' | 'not-tried' | 'other';

interface Failure {
  seed: number;
  key: string;
  startMs: number;
  failMs: number;
  reason: string;
  cause: Cause;
  /** ms after the failure until some replica is out of its outage (0: one was up). */
  backAfterMs: number;
  traces: Trace[];
}

const downAt = (timeline: ServerTimeline, tMs: number): boolean => timeline.outageAt(tMs) !== undefined;
/** An outage overlapped [fromMs, toMs]. */
const downDuring = (timeline: ServerTimeline, fromMs: number, toMs: number): boolean => downAt(timeline, fromMs) || timeline.outageStartingIn(fromMs, toMs) !== undefined;

function classify(traces: Trace[], timelines: ReadonlyMap<string, ServerTimeline>, failMs: number): Cause {
  const up = [...timelines.keys()].filter((server) => !downAt(timelines.get(server)!, failMs));
  if (up.length === 0) return 'all-down';
  const onUp = traces.filter((trace) => up.includes(trace.server));
  // A timeout (or a cancel) while the exchange still waited for a connection.
  if (onUp.some((trace) => trace.engine.some((event) => event.outcome === 'timeout' && !event.sent) || (trace.end === 'cancelled' && trace.sentAtMs === undefined))) return 'own-queue';
  const live = (trace: Trace): boolean => !downDuring(timelines.get(trace.server)!, trace.queuedAtMs, trace.endAtMs ?? failMs);
  if (onUp.some((trace) => live(trace) && (trace.end === 'cancelled' || trace.engine.some((event) => event.outcome === 'timeout' || event.outcome === 'cut-mid-body')) && (trace.status ?? 200) < 500)) return 'gave-up-on-live';
  if (up.some((server) => !traces.some((trace) => trace.server === server))) return 'not-tried';
  if (onUp.every((trace) => !live(trace) || (trace.status ?? 200) >= 500)) return 'down-when-tried';
  return 'other';
}

/** `policy` with every exchange of every page request traced, and each failure classified into `sink`. */
/** Per policy: timeouts and cut bodies the engine reported on a replica with no outage during the exchange (it was alive), and how many of those timeouts came while the exchange still waited for a connection. */
const liveFailures: Record<string, { timeouts: number; queuedTimeouts: number; cuts: number }> = {};

function traced(base: (hooks: Parameters<typeof enginePolicy>[0]['hooks']) => Policy, seed: number, sink: Failure[]): Policy {
  const world = generateWorld(seed);
  const timelines = compileScenario(world.scenario);
  const byKey = new Map<string, Trace[]>();
  const ofEngine = new WeakMap<EngineExchange, Trace>();
  let pending: EngineExchange | undefined;
  const hooks = {
    requestWillFetch: (exchange: EngineExchange) => void (pending = exchange),
    fetchDidFail: (exchange: EngineExchange, outcome: SampleOutcome) => {
      const trace = ofEngine.get(exchange);
      if (!trace) return;
      trace.engine.push({ outcome, atMs: now(), sent: trace.sentAtMs !== undefined });
      if ((outcome !== 'timeout' && outcome !== 'cut-mid-body') || downDuring(timelines.get(trace.server)!, trace.queuedAtMs, now())) return;
      const live = (liveFailures[policy.name] ??= { timeouts: 0, queuedTimeouts: 0, cuts: 0 });
      if (outcome === 'cut-mid-body') live.cuts++;
      else if (trace.sentAtMs === undefined) live.queuedTimeouts++;
      else live.timeouts++;
    },
  };
  let now = (): number => 0;
  const policy = base(hooks);
  return {
    ...policy,
    start(environment) {
      now = () => environment.queue.now();
      const network = environment.network;
      const send = network.send.bind(network);
      network.send = (exchange, handlers) => {
        const engineExchange = pending;
        pending = undefined;
        const baseKey = exchange.key.split('#')[0]!;
        if (!/^\d+\|\d+\|\d+$/.test(baseKey)) return send(exchange, handlers);
        const trace: Trace = { server: exchange.server, purpose: exchange.purpose, queuedAtMs: now(), stalls: 0, engine: [] };
        if (engineExchange) ofEngine.set(engineExchange, trace);
        const list = byKey.get(baseKey) ?? [];
        byKey.set(baseKey, list);
        list.push(trace);
        const wrapped: ExchangeHandlers = {
          onSent: (atMs) => {
            trace.sentAtMs = atMs;
            handlers.onSent?.(atMs);
          },
          onFirstByte: (atMs, pushed, status) => {
            trace.headAtMs = atMs;
            trace.status = status ?? 200;
            handlers.onFirstByte?.(atMs, pushed, status);
          },
          onComplete: (atMs) => {
            trace.end = 'complete';
            trace.endAtMs = atMs;
            handlers.onComplete?.(atMs);
          },
          onError: (atMs) => {
            trace.end = 'error';
            trace.endAtMs = atMs;
            handlers.onError?.(atMs);
          },
          onStall: (atMs, resumesAtMs) => {
            trace.stalls++;
            handlers.onStall?.(atMs, resumesAtMs);
          },
        };
        const handle = send(exchange, wrapped);
        return {
          sentAtMs: handle.sentAtMs,
          cancel: () => {
            if (trace.end === undefined) {
              trace.end = 'cancelled';
              trace.endAtMs = now();
            }
            handle.cancel();
          },
        };
      };
      const run = policy.start(environment);
      return {
        client: (clientIndex) => {
          const client = run.client(clientIndex);
          return {
            request: (request, done) => {
              const startMs = now();
              let settled = false;
              const fail = (reason: string): void => {
                const failMs = now();
                const traces = byKey.get(request.key) ?? [];
                const backAfterMs = Math.min(...[...timelines.values()].map((timeline) => Math.max(0, (timeline.outageAt(failMs)?.toMs ?? failMs) - failMs)));
                sink.push({ seed, key: request.key, startMs, failMs, reason, cause: classify(traces, timelines, failMs), backAfterMs, traces });
              };
              const cancel = client.request(request, (result) => {
                settled = true;
                if (!result.ok) fail(result.failure ?? '?');
                done(result);
              });
              // The page gives up (runWorld: workload.requestTimeoutMs) and cancels: a failed request the policy never reports.
              return () => {
                const reason = cancel();
                if (!settled) fail('gave-up');
                settled = true;
                return reason;
              };
            },
          };
        },
      };
    },
  };
}

const policies: Record<string, (hooks: Parameters<typeof enginePolicy>[0]['hooks']) => Policy> = {
  webpp: (hooks) => enginePolicy({ name: 'webpp', description: 'core policy "webpp"', policy: 'webpp', options: webppOptions, ...(hooks ? { hooks } : {}) }),
  // As optimalPolicy(), with the hooks.
  'optimal-complete': (hooks) =>
    enginePolicy({ name: 'optimal-complete', description: 'every replica at once, the first complete body wins', policy: 'optimal-complete', shared: false, ...(hooks ? { hooks } : {}) }),
};

const failures: Record<string, Failure[]> = { webpp: [], 'optimal-complete': [] };
const requests: Record<string, number> = { webpp: 0, 'optimal-complete': 0 };
for (const seed of seeds) {
  for (const [name, make] of Object.entries(policies)) {
    const before = failures[name]!.length;
    const result = runWorld(generateWorld(seed), traced(make, seed, failures[name]!));
    requests[name]! += result.requests;
    // The same count as runWorld's (what the generalization bench reports), or this bench explains other failures than those.
    if (failures[name]!.length - before !== result.failed) throw new Error(`seed ${seed}, ${name}: traced ${failures[name]!.length - before} failed requests, runWorld counted ${result.failed}`);
  }
}

const causes: Cause[] = ['all-down', 'own-queue', 'gave-up-on-live', 'down-when-tried', 'not-tried', 'other'];
console.log(`seeds: ${seeds.length} (${seeds[0]}…${seeds.at(-1)})`);
console.log(`| policy | requests | failed | ${causes.join(' | ')} |`);
console.log(`| --- | --- | --- |${causes.map(() => ' --- |').join('')}`);
for (const [name, list] of Object.entries(failures)) {
  console.log(`| ${name} | ${requests[name]} | ${list.length} | ${causes.map((cause) => list.filter((failure) => failure.cause === cause).length).join(' | ')} |`);
}
console.log('\nFailure samples on a live replica (no outage during the exchange):');
for (const [name, live] of Object.entries(liveFailures)) console.log(`  ${name}: ${live.timeouts} timeouts after leaving the browser, ${live.queuedTimeouts} while still queued for a connection, ${live.cuts} bodies cut (idle)`);
for (const [name, list] of Object.entries(failures)) {
  const bySeed = new Map<number, Failure[]>();
  for (const failure of list) bySeed.set(failure.seed, [...(bySeed.get(failure.seed) ?? []), failure]);
  for (const [seed, seedFailures] of bySeed) {
    const counts = causes.map((cause) => [cause, seedFailures.filter((failure) => failure.cause === cause).length] as const).filter(([, count]) => count > 0);
    const back = seedFailures.map((failure) => failure.backAfterMs).sort((a, b) => a - b);
    console.log(`${name} seed ${seed}: ${seedFailures.length} failed (${counts.map(([cause, count]) => `${cause} ${count}`).join(', ')}); a replica back after (ms) median ${Math.round(back[Math.floor(back.length / 2)] ?? 0)}, max ${Math.round(back.at(-1) ?? 0)}; ${generateWorld(seed).traits.join(', ')}`);
    if (!verbose) continue;
    for (const failure of seedFailures) {
      console.log(`  ${failure.key} ${failure.reason} [${failure.cause}] ${Math.round(failure.startMs)}→${Math.round(failure.failMs)} ms`);
      for (const trace of failure.traces) {
        const t = (ms: number | undefined): string => (ms === undefined ? '-' : String(Math.round(ms)));
        console.log(`    ${trace.server} ${trace.purpose} queued ${t(trace.queuedAtMs)} sent ${t(trace.sentAtMs)} head ${t(trace.headAtMs)}${trace.status && trace.status !== 200 ? ` (${trace.status})` : ''} ${trace.end ?? 'open'} ${t(trace.endAtMs)} stalls ${trace.stalls} engine ${trace.engine.map((event) => `${event.outcome}@${Math.round(event.atMs)}${event.sent ? '' : '(queued)'}`).join(' ')}`);
      }
    }
  }
}
