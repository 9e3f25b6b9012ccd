/**
 * The worker and the simulator run the same client engine (issue 11). One seeded script of
 * exchanges (per server and request: a first byte after n ms, a refused connection, or a
 * server that hangs) is played through the simulator's driver on its virtual clock, and
 * through the worker's driver (sw/src/fetch-io.ts: fetch and setTimeout, here on fake
 * timers) with samples delivered when the body is in, as the worker's Resource Timing
 * sampler does. Both must make the very same decisions: the same plans, the same attempts
 * started at the same times with the same outcomes, the same refreshes and probes, the
 * same samples. A copy of the state machine in either driver would drift from this.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { createPolicy, ClientEngine } from '@webpp/core';
import type { EngineHooks, ExchangeSample, RunResult } from '@webpp/core';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { fetchIO } from '../../../sw/src/fetch-io.js';
import type { ExchangeSender } from '../../../sw/src/fetch-io.js';
import { ENGINE_EPOCH_MS, EventQueue, enginePolicy } from '../src/index.js';
import type { PolicyEnvironment, RequestResult, SimulatedNetwork } from '../src/index.js';

const SERVERS = ['A', 'B', 'C'];
const REQUESTS = 80;
const THINK_MS = 40;

/** Deterministic per (server, key): mulberry32 over a string hash. */
function draw(server: string, key: string): number {
  let hash = 2166136261;
  for (const char of `${server}|${key}`) hash = Math.imul(hash ^ char.charCodeAt(0), 16777619);
  let t = (hash + 0x6d2b79f5) >>> 0;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}

type Scripted = { kind: 'answer'; afterMs: number } | { kind: 'refused'; afterMs: number } | { kind: 'hang' };

/** A is fast but hangs now and then, B is steady, C is slow and sometimes refuses. */
function script(server: string, key: string): Scripted {
  const luck = draw(server, key);
  const base = { A: 8, B: 25, C: 60 }[server]!;
  if (server === 'A' && luck < 0.08) return { kind: 'hang' };
  if (server === 'C' && luck > 0.9) return { kind: 'refused', afterMs: 3 };
  return { kind: 'answer', afterMs: base + Math.floor(luck * base) };
}

function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The decision trace both drivers must agree on, in engine-clock ms since the start. */
function tracer(now: () => number): { hooks: EngineHooks; trace: string[] } {
  const trace: string[] = [];
  const at = (): number => now() - ENGINE_EPOCH_MS;
  const hooks: EngineHooks = {
    planned: ({ plan }) => void trace.push(`${at()} plan ${plan.map((attempt) => `${attempt.server}/${attempt.timeoutMs}`).join(',')}`),
    requestWillFetch: (exchange) => void trace.push(`${at()} send ${exchange.purpose} ${exchange.server}`),
    sampleObserved: (sample: ExchangeSample) => void trace.push(`${at()} sample ${sample.purpose} ${sample.server} ${sample.outcome} ${sample.ttfbMs ?? ''}`),
    runDidFinish: (result: RunResult<unknown>) =>
      void trace.push(`${at()} ${result.kind} ${result.attempts.map((record) => `${record.server}:${record.outcome}@${record.startedAfterMs}`).join(' ')}`),
  };
  return { hooks, trace };
}

/** The simulator's driver on a scripted network. */
function simulatorTrace(policyName: string): string[] {
  const queue = new EventQueue();
  const { hooks, trace } = tracer(() => ENGINE_EPOCH_MS + queue.now());
  const network = {
    send(exchange: { server: string; key: string }, handlers: { onFirstByte?(atMs: number): void; onComplete?(atMs: number): void; onError?(atMs: number): void }) {
      const scripted = script(exchange.server, exchange.key);
      const timers = scripted.kind === 'hang' ? [] : [queue.after(scripted.afterMs, () => (scripted.kind === 'answer' ? (handlers.onFirstByte?.(queue.now()), handlers.onComplete?.(queue.now())) : handlers.onError?.(queue.now())))];
      return { sentAtMs: queue.now(), cancel: () => timers.forEach((timer) => queue.cancel(timer)) };
    },
  } as unknown as SimulatedNetwork;
  const environment: PolicyEnvironment = {
    queue,
    network,
    servers: SERVERS,
    clients: 1,
    seed: 1,
    observer: { predictionError: () => undefined, markedFailed: () => undefined },
    random: () => seeded(1),
  };
  const client = enginePolicy({ name: policyName, description: '', policy: policyName, hooks }).start(environment).client(0);
  const next = (index: number): void => {
    if (index >= REQUESTS) return;
    client.request({ client: 0, index, sizeBytes: 1_000, key: `0|${index}` }, (_result: RequestResult) => void queue.after(THINK_MS, () => next(index + 1)));
  };
  queue.at(0, () => next(0));
  queue.run();
  return trace;
}

/** The worker's driver (fetch-io.ts) on fake timers, with a scripted fetch. */
async function workerTrace(policyName: string): Promise<string[]> {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date', 'performance'] });
  vi.setSystemTime(ENGINE_EPOCH_MS);
  const { hooks, trace } = tracer(Date.now);
  const scriptedFetch = (request: Request): Promise<Response> =>
    new Promise((resolve, reject) => {
      const scripted = script(request.headers.get('x-server')!, request.headers.get('x-key')!);
      request.signal.addEventListener('abort', () => reject(new DOMException('aborted', 'AbortError')));
      if (scripted.kind === 'answer') setTimeout(() => resolve(new Response('body')), scripted.afterMs);
      else if (scripted.kind === 'refused') setTimeout(() => reject(new TypeError('fetch failed')), scripted.afterMs);
    });
  let engine!: ClientEngine<Response, ExchangeSender>;
  let backgroundCount = 0;
  const background: ExchangeSender = {
    build: (exchange, signal) => new Request(`http://${exchange.server}.test/`, { signal, headers: { 'x-server': exchange.server, 'x-key': `shared|${exchange.purpose}|${backgroundCount++}` } }),
    fetch: scriptedFetch,
    // A HEAD's sample is in with its head.
    onResponse: (exchange, _response, elapsedMs) => engine.observe({ server: exchange.server, purpose: exchange.purpose, outcome: 'served', nowMs: Date.now(), ttfbMs: elapsedMs }),
  };
  const policy = createPolicy(policyName, { random: seeded(1), now: Date.now })!;
  engine = new ClientEngine({ policy, io: fetchIO(background), backgroundTarget: (server) => server, hooks });
  const run = async (): Promise<void> => {
    for (let index = 0; index < REQUESTS; index++) {
      const heads = new Map<string, { elapsedMs: number; purpose: ExchangeSample['purpose'] }>();
      const sender: ExchangeSender = {
        build: (exchange, signal) => new Request(`http://${exchange.server}.test/file`, { signal, headers: { 'x-server': exchange.server, 'x-key': `0|${index}` } }),
        fetch: scriptedFetch,
        onResponse: (exchange, _response, elapsedMs) => void heads.set(exchange.server, { elapsedMs, purpose: exchange.purpose }),
      };
      const plan = engine.plan({ logicalUrl: 'sim:1000', method: 'GET', candidates: SERVERS, sizeBytes: 1_000 }, (server) => server);
      const result = await new Promise<RunResult<Response>>((done) => engine.run(plan, done, { context: sender }));
      engine.maintain(SERVERS);
      if (result.kind === 'served') {
        await result.response.text();
        // The Resource Timing entry comes once the body is in: then the winner's sample.
        const head = heads.get(result.winner.server)!;
        engine.observe({ server: result.winner.server, purpose: head.purpose, outcome: 'served', nowMs: Date.now(), ttfbMs: head.elapsedMs });
      }
      await new Promise((resolve) => setTimeout(resolve, THINK_MS));
    }
  };
  let finished = false;
  const running = run().then(() => (finished = true));
  for (let steps = 0; !finished && steps < 100_000; steps++) await vi.advanceTimersByTimeAsync(1);
  await running;
  // What is still in flight (a refresh or probe) ends as in the simulator, which runs until no event is left.
  await vi.advanceTimersByTimeAsync(30_000);
  return trace;
}

afterEach(() => {
  vi.useRealTimers();
});

describe('one engine for the worker and the simulator', () => {
  for (const policyName of ['fast', 'hedged', 'paper']) {
    it(`makes the same decisions through both drivers (${policyName})`, async () => {
      const simulated = simulatorTrace(policyName);
      const worker = await workerTrace(policyName);
      // The script exercises timeouts and failover (or hedges), not only first choices.
      expect(simulated.some((line) => line.includes(':timeout@') || line.includes(' send hedge '))).toBe(true);
      expect(simulated.some((line) => line.includes(' send refresh ') || line.includes(' send probe '))).toBe(true);
      expect(worker).toEqual(simulated);
    });
  }

  it('neither driver plans, ranks or times attempts itself: only core does', () => {
    const sources = (dir: string): string[] =>
      readdirSync(new URL(dir, import.meta.url), { recursive: true, encoding: 'utf8' })
        .filter((file) => file.endsWith('.ts'))
        .map((file) => readFileSync(new URL(`${dir}${file}`, import.meta.url), 'utf8'));
    const drivers = [...sources('../../../sw/src/'), ...sources('../src/')];
    for (const forbidden of [/\brankReplicas\(/, /\bselectReplica\(/, /\bdueProbes\(/, /\brefreshTarget\(/, /\.recordSample\(/, /\.markFailed\(/, /policy\.plan\(/]) {
      expect(drivers.filter((source) => forbidden.test(source)), String(forbidden)).toEqual([]);
    }
  });
});
