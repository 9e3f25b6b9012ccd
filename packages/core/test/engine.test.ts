/**
 * The client engine on a manual clock: what the policy asks (hedges it may refuse, a
 * maintenance time), what a race is won by (first head, or first complete body), a body
 * that freezes after its head, and background requests never doubled per server.
 */
import { describe, expect, it } from 'vitest';
import { ClientEngine, createPolicy } from '../src/index.js';
import type { ClientPolicy, EngineIO, Exchange, ExchangeEvents, ExchangeSample, RunResult } from '../src/index.js';
import { VirtualTimers } from './fake-clock.js';

/** A manual clock with timers, and a network whose exchanges the test answers by hand. */
class Harness extends VirtualTimers {
  readonly sent: { exchange: Exchange; events: ExchangeEvents<string>; cancelled: boolean }[] = [];
  readonly io: EngineIO<string> = {
    now: () => this.nowMs,
    setTimer: (delayMs, run) => this.timer(delayMs, run),
    send: (exchange, events) => {
      const entry = { exchange, events, cancelled: false };
      this.sent.push(entry);
      return () => void (entry.cancelled = true);
    },
  };

  constructor() {
    super(0);
  }

  to(server: string): ExchangeEvents<string> {
    const entry = [...this.sent].reverse().find((candidate) => candidate.exchange.server === server && !candidate.cancelled);
    if (!entry) throw new Error(`nothing in flight to ${server}`);
    return entry.events;
  }
}

/** Requests held by late binding now (the engine's private hold queue, read for the test only). */
function heldCount(engine: ClientEngine<string>): number {
  return (engine as unknown as { held?: { size: number } }).held?.size ?? 0;
}

function basePolicy(overrides: Partial<ClientPolicy>): ClientPolicy {
  return { ...createPolicy('random', { random: () => 0, now: () => 0 })!, ...overrides };
}

/** One request over replicas A and B (timeouts of 1 s), retried every 1.5 s within a 30 s window: the harness, and the run's result so far. */
function runOnTwoWithRetryRounds(): { harness: Harness; result: () => RunResult<string> | undefined } {
  const harness = new Harness();
  const policy = basePolicy({
    plan: () => ['A', 'B'].map((server) => ({ server, timeoutMs: 1_000, reason: 'next' })),
    retryAfterMs: (round, elapsedMs) => (elapsedMs + 1_500 <= 30_000 ? 1_500 : undefined),
  });
  const engine = engineWith(policy, harness);
  let result: RunResult<string> | undefined;
  engine.run(engine.plan({ logicalUrl: 'u', method: 'GET', candidates: ['A', 'B'] }, (s) => s), (done) => (result = done));
  return { harness, result: () => result };
}

function engineWith(policy: ClientPolicy, harness: Harness, samples: ExchangeSample[] = []): ClientEngine<string> {
  const wrapped = { ...policy, observe: (sample: ExchangeSample) => (samples.push(sample), policy.observe(sample)) };
  return new ClientEngine({ policy: wrapped, io: harness.io, backgroundTarget: (server) => `${server}/x` });
}

describe('ClientEngine', () => {
  it('asks the policy at the moment a hedge would start, and skips the hedge it refuses', () => {
    const harness = new Harness();
    const asked: [string, number][] = [];
    let budget = 1;
    const policy = basePolicy({
      plan: () => [
        { server: 'A', timeoutMs: 1_000, reason: 'best' },
        { server: 'B', timeoutMs: 1_000, reason: 'hedge', hedgeAfterMs: 50 },
      ],
      admitHedge: (server, nowMs) => (asked.push([server, nowMs]), budget-- > 0),
    });
    const engine = engineWith(policy, harness);
    const results: RunResult<string>[] = [];
    for (let i = 0; i < 2; i++) {
      engine.run(engine.plan({ logicalUrl: 'u', method: 'GET', candidates: ['A', 'B'] }, (s) => s), (result) => results.push(result));
      harness.advance(60);
      harness.to('A').head({ status: 200, response: 'from A', ttfbMs: 60 });
    }
    expect(asked).toEqual([['B', 50], ['B', 110]]);
    expect(results.map((result) => result.attempts.map((record) => `${record.server}:${record.outcome}`))).toEqual([['A:served', 'B:cancelled'], ['A:served']]);
  });

  it('a timed-out attempt runs on until its deadline and still wins if it answers first', () => {
    const harness = new Harness();
    const samples: ExchangeSample[] = [];
    const policy = basePolicy({
      plan: () => [
        { server: 'A', timeoutMs: 100, deadlineMs: 1_000, reason: 'best' },
        { server: 'B', timeoutMs: 100, reason: 'next' },
      ],
    });
    const engine = engineWith(policy, harness, samples);
    let result: RunResult<string> | undefined;
    engine.run(engine.plan({ logicalUrl: 'u', method: 'GET', candidates: ['A', 'B'] }, (s) => s), (done) => (result = done));
    harness.advance(150); // A timed out at 100: B started, A runs on
    harness.to('A').head({ status: 200, response: 'late A', ttfbMs: 150 });
    expect(result?.kind).toBe('served');
    expect(result?.attempts).toMatchObject([
      { server: 'A', outcome: 'served', timedOut: true, startedAfterMs: 0 },
      { server: 'B', outcome: 'cancelled', startedAfterMs: 100 },
    ]);
    expect(samples.map((sample) => `${sample.server}:${sample.outcome}`)).toEqual(['A:timeout']);
  });

  it('optimal-complete: the first complete body wins, not the first head', () => {
    const harness = new Harness();
    const engine = engineWith(createPolicy('optimal-complete', { random: () => 0, now: () => 0 })!, harness);
    let result: RunResult<string> | undefined;
    engine.run(engine.plan({ logicalUrl: 'u', method: 'GET', candidates: ['A', 'B'] }, (s) => s), (done) => (result = done));
    harness.advance(1);
    harness.to('A').head({ status: 200, response: 'A', ttfbMs: 1 });
    harness.to('B').head({ status: 200, response: 'B', ttfbMs: 1 });
    expect(result).toBeUndefined();
    harness.to('B').bodyComplete({ bodyBytes: 10, bodyMs: 1 });
    expect(result?.kind === 'served' && result.response).toBe('B');
  });

  it('a served body that freezes longer than its deadline is cut off and reported', () => {
    const harness = new Harness();
    const samples: ExchangeSample[] = [];
    const engine = engineWith(basePolicy({ plan: () => [{ server: 'A', timeoutMs: 100, deadlineMs: 500, reason: 'only' }] }), harness, samples);
    const broken: string[] = [];
    engine.run(engine.plan({ logicalUrl: 'u', method: 'GET', candidates: ['A'] }, (s) => s), () => undefined, { onBodyBroken: (server) => broken.push(server) });
    harness.to('A').head({ status: 200, response: 'A', ttfbMs: 5 });
    harness.to('A').stalled(400); // resumes within 500 ms: fine
    harness.advance(1_000);
    expect(broken).toEqual([]);
    harness.to('A').stalled(null); // never resumes
    harness.advance(499);
    expect(broken).toEqual([]);
    harness.advance(1);
    expect(broken).toEqual(['A']);
    expect(samples.map((sample) => sample.outcome)).toEqual(['cut-mid-body']);
  });

  it('a missing resource costs at most two requests: a second 404 is final (issue 25 item 7)', () => {
    const harness = new Harness();
    const policy = basePolicy({
      plan: () => ['A', 'B', 'C'].map((server) => ({ server, timeoutMs: 1_000, reason: 'next' })),
    });
    const engine = engineWith(policy, harness);
    let result: RunResult<string> | undefined;
    engine.run(engine.plan({ logicalUrl: 'u', method: 'GET', candidates: ['A', 'B', 'C'] }, (s) => s), (done) => (result = done));
    harness.to('A').head({ status: 404, response: '404 from A', ttfbMs: 5 });
    expect(result).toBeUndefined(); // one 404 may be a stale binding: one more replica is asked
    harness.to('B').head({ status: 404, response: '404 from B', ttfbMs: 5 });
    expect(harness.sent.map((entry) => entry.exchange.server)).toEqual(['A', 'B']);
    expect(result?.kind).toBe('failed');
    expect(result?.kind === 'failed' && result.fallback?.response).toBe('404 from B');
  });

  it('a 404 then a 5xx still asks the third replica, which may hold the resource', () => {
    const harness = new Harness();
    const policy = basePolicy({
      plan: () => ['A', 'B', 'C'].map((server) => ({ server, timeoutMs: 1_000, reason: 'next' })),
    });
    const engine = engineWith(policy, harness);
    let result: RunResult<string> | undefined;
    engine.run(engine.plan({ logicalUrl: 'u', method: 'GET', candidates: ['A', 'B', 'C'] }, (s) => s), (done) => (result = done));
    harness.to('A').head({ status: 404, response: '404', ttfbMs: 5 });
    harness.to('B').head({ status: 503, response: '503', ttfbMs: 5 });
    harness.to('C').head({ status: 200, response: 'C', ttfbMs: 5 });
    expect(result?.kind === 'served' && result.response).toBe('C');
  });

  it('the client\'s own queue is no timeout: an attempt\'s timeout starts when one of the host\'s connections frees; still queued at its timeout, the next replica is asked beside it', () => {
    const harness = new Harness();
    const samples: ExchangeSample[] = [];
    const policy = basePolicy({ plan: () => ['A', 'B'].map((server) => ({ server, timeoutMs: 1_000, reason: 'next' })) });
    const wrapped = { ...policy, observe: (sample: ExchangeSample) => void samples.push(sample) };
    // Six connections per host, as a browser over HTTP/1.1.
    const engine = new ClientEngine({ policy: wrapped, io: harness.io, backgroundTarget: (server) => `${server}/x`, connectionsPerServer: () => 6 });
    const results: RunResult<string>[] = [];
    for (let i = 0; i < 7; i++) engine.run(engine.plan({ logicalUrl: `u${i}`, method: 'GET', candidates: ['A', 'B'] }, (s) => s), (result) => results.push(result));
    harness.advance(900);
    for (const entry of harness.sent.slice(0, 6)) entry.events.head({ status: 200, response: 'A', ttfbMs: 900 });
    // The six bodies take until 1.4 s: the seventh request waits for a connection until then.
    harness.advance(500);
    for (const entry of harness.sent.slice(0, 6)) entry.events.bodyComplete({ bodyBytes: 100_000, bodyMs: 500 });
    harness.advance(900);
    harness.sent[6]!.events.head({ status: 200, response: 'A, seventh', ttfbMs: 900 });
    expect(results.map((result) => result.kind)).toEqual(Array(7).fill('served'));
    // A is never timed out (B, asked at 1 s and silent, is: its own timeout, at 2 s).
    expect(samples.filter((sample) => sample.outcome === 'timeout').map((sample) => `${sample.server}@${sample.nowMs}`)).toEqual(['B@2000']);
    // At 1 s the seventh was still queued: B was asked beside it (no failure learnt), and lost to A.
    expect(harness.sent.map((entry) => entry.exchange.server)).toEqual([...Array(7).fill('A'), 'B']);
    expect(harness.sent[7]!.cancelled).toBe(true);
    expect(results[6]!.kind === 'served' && results[6]!.response).toBe('A, seventh');
  });

  it('every replica down: tries the plan again after the policy\'s backoff, servers not marked failed first, and serves a replica that came back', () => {
    const harness = new Harness();
    const asked: [number, number, readonly string[] | undefined][] = [];
    const policy = basePolicy({
      plan: () => ['A', 'B'].map((server) => ({ server, timeoutMs: 1_000, reason: 'next' })),
      retryAfterMs: (round, elapsedMs, servers) => (asked.push([round, elapsedMs, servers]), round < 2 ? 1_500 : undefined),
      // A stays failed (marked by its error); B is not marked, so the retry round asks B first.
      describe: () => [{ server: 'A', state: 'failed', sampleCount: 1, lastSampleAtMs: 0 }],
    });
    const engine = engineWith(policy, harness);
    let result: RunResult<string> | undefined;
    engine.run(engine.plan({ logicalUrl: 'u', method: 'GET', candidates: ['A', 'B'] }, (s) => s), (done) => (result = done));
    harness.to('A').error('refused');
    harness.advance(10);
    harness.to('B').head({ status: 503, response: '503 from B', ttfbMs: 5 });
    // Both failed: no result yet, and nothing sent until the backoff has passed.
    expect(result).toBeUndefined();
    // The policy is told which servers the plan had (policy.ts: servers gone for long are not waited for).
    expect(asked).toEqual([[0, 10, ['A', 'B']]]);
    harness.advance(1_499);
    expect(harness.sent).toHaveLength(2);
    harness.advance(1);
    expect(harness.sent.map((entry) => `${entry.exchange.server}${entry.exchange.retryRound ?? ''}`)).toEqual(['A', 'B', 'B1']);
    harness.to('B').head({ status: 200, response: 'B is back', ttfbMs: 5 });
    expect(result?.kind === 'served' && result.response).toBe('B is back');
  });

  it('retries no longer than the policy says: then the request fails, with the best answer seen', () => {
    const harness = new Harness();
    const policy = basePolicy({
      plan: () => [{ server: 'A', timeoutMs: 1_000, reason: 'only' }],
      retryAfterMs: (round) => (round < 1 ? 1_000 : undefined),
    });
    const engine = engineWith(policy, harness);
    let result: RunResult<string> | undefined;
    engine.run(engine.plan({ logicalUrl: 'u', method: 'GET', candidates: ['A'] }, (s) => s), (done) => (result = done));
    harness.to('A').head({ status: 502, response: '502', ttfbMs: 5 });
    harness.advance(1_000);
    harness.to('A').error('reset');
    expect(harness.sent).toHaveLength(2);
    expect(result?.kind).toBe('failed');
    expect(result?.kind === 'failed' && result.fallback?.response).toBe('502');
  });

  it('a resource every replica answers with a 5xx gets one retry round, then the page has the 5xx, long before the window ends', () => {
    const { harness, result } = runOnTwoWithRetryRounds();
    harness.to('A').head({ status: 500, response: '500 from A', ttfbMs: 5 });
    harness.to('B').head({ status: 500, response: '500 from B', ttfbMs: 5 });
    expect(result()).toBeUndefined();
    harness.advance(1_500);
    expect(harness.sent).toHaveLength(3);
    harness.to('A').head({ status: 500, response: '500 again', ttfbMs: 5 });
    harness.to('B').head({ status: 500, response: '500 again from B', ttfbMs: 5 });
    expect(result()).toMatchObject({ kind: 'failed', fallback: { response: expect.stringMatching(/^500/) } });
    harness.advance(30_000);
    expect(harness.sent).toHaveLength(4);
  });

  it('a 5xx from one replica while the other cannot be reached: the rounds go on within the window, and the replica that comes back serves', () => {
    const { harness, result } = runOnTwoWithRetryRounds();
    // A sheds (a brownout), B is down (refused), twice.
    for (let round = 0; round < 2; round++) {
      harness.to('A').head({ status: 500, response: '500 from A', ttfbMs: 5 });
      harness.to('B').error('refused');
      expect(result()).toBeUndefined();
      harness.advance(1_500);
    }
    // The third round: B is back.
    harness.to('A').head({ status: 500, response: '500 from A', ttfbMs: 5 });
    harness.to('B').head({ status: 200, response: 'B is back', ttfbMs: 5 });
    expect(result()).toMatchObject({ kind: 'served', response: 'B is back' });
  });

  it('replicas that only fail at the network are retried for the whole window', () => {
    const harness = new Harness();
    const policy = basePolicy({
      plan: () => [{ server: 'A', timeoutMs: 1_000, reason: 'only' }],
      retryAfterMs: (round, elapsedMs) => (elapsedMs + 1_000 <= 5_000 ? 1_000 : undefined),
    });
    const engine = engineWith(policy, harness);
    let result: RunResult<string> | undefined;
    engine.run(engine.plan({ logicalUrl: 'u', method: 'GET', candidates: ['A'] }, (s) => s), (done) => (result = done));
    for (let round = 0; round < 4; round++) {
      harness.to('A').error('refused');
      expect(result).toBeUndefined();
      harness.advance(1_000);
    }
    expect(harness.sent).toHaveLength(5);
    harness.to('A').head({ status: 200, response: 'back', ttfbMs: 5 });
    expect(result?.kind === 'served' && result.response).toBe('back');
  });

  it('a missing resource is not retried, and a policy without retryAfterMs fails at once (Figure 4)', () => {
    for (const retryAfterMs of [() => 1_000, undefined]) {
      const harness = new Harness();
      const policy = basePolicy({ plan: () => [{ server: 'A', timeoutMs: 1_000, reason: 'only' }], ...(retryAfterMs ? { retryAfterMs } : {}) });
      const engine = engineWith(policy, harness);
      let result: RunResult<string> | undefined;
      engine.run(engine.plan({ logicalUrl: 'u', method: 'GET', candidates: ['A'] }, (s) => s), (done) => (result = done));
      if (retryAfterMs) harness.to('A').head({ status: 404, response: '404', ttfbMs: 5 });
      else harness.to('A').error('refused');
      expect(result?.kind).toBe('failed');
      harness.advance(5_000);
      expect(harness.sent).toHaveLength(1);
    }
  });

  it('runs maintenance when the policy says, and never sends two background requests to one server', () => {
    const harness = new Harness();
    const asked: number[] = [];
    const policy = basePolicy({
      maintenance: ({ nowMs }) => (asked.push(nowMs), [{ server: 'A', purpose: 'probe', method: 'head' }]),
      nextMaintenanceAtMs: (nowMs) => (nowMs < 2_000 ? 1_000 * (Math.floor(nowMs / 1_000) + 1) : undefined),
    });
    const engine = engineWith(policy, harness);
    engine.maintain(['A']);
    harness.advance(2_500);
    expect(asked).toEqual([0, 1_000, 2_000]);
    // The first probe never answered before its timeout (5 s): the later rounds sent none.
    expect(harness.sent.filter((entry) => entry.exchange.purpose === 'probe')).toHaveLength(1);
  });
});

describe('ClientEngine: late binding (a burst bound as connections free)', () => {
  /** Join the shortest queue of this client's exchanges (the plan's inFlight), A first on a tie; records each plan's rebind flag. */
  function shortestQueuePolicy(rebinds: boolean[]): ClientPolicy {
    return basePolicy({
      bindsLate: true,
      plan: (input) => {
        rebinds.push(input.rebind === true);
        const queued = (server: string): number => (input.inFlight ?? []).filter((exchange) => exchange.server === server).length;
        return ['A', 'B'].sort((a, b) => queued(a) - queued(b)).map((server) => ({ server, timeoutMs: 1_000, reason: 'shortest-queue' }));
      },
    });
  }

  function lateEngine(policy: ClientPolicy, harness: Harness): ClientEngine<string> {
    return new ClientEngine({ policy, io: harness.io, backgroundTarget: (server) => `${server}/x`, connectionsPerServer: () => 1 });
  }

  const serve = (harness: Harness, index: number): void => {
    const entry = harness.sent[index]!;
    entry.events.head({ status: 200, response: `${entry.exchange.server}${index}`, ttfbMs: 10 });
    entry.events.bodyComplete({ bodyBytes: 1_000, bodyMs: 1 });
  };

  it('holds what would queue behind the client\'s own exchanges and sends it to the server that frees first', () => {
    const harness = new Harness();
    const rebinds: boolean[] = [];
    const engine = lateEngine(shortestQueuePolicy(rebinds), harness);
    const results: RunResult<string>[] = [];
    for (let i = 0; i < 4; i++) engine.run(engine.plan({ logicalUrl: `u${i}`, method: 'GET', candidates: ['A', 'B'] }, (s) => s), (result) => results.push(result));
    // One connection each: the first two go out, the other two wait in the engine, not in the browser's queue.
    expect(harness.sent.map((entry) => entry.exchange.server)).toEqual(['A', 'B']);
    expect(heldCount(engine)).toBe(2);
    // B answers first: its connection takes the third request, planned again when it can be sent.
    harness.advance(10);
    serve(harness, 1);
    harness.advance(0);
    expect(harness.sent.map((entry) => entry.exchange.server)).toEqual(['A', 'B', 'B']);
    // The fourth saw the third queued ahead of it where it would go (B), so it waits for A.
    harness.advance(10);
    serve(harness, 0);
    harness.advance(0);
    expect(harness.sent.map((entry) => entry.exchange.server)).toEqual(['A', 'B', 'B', 'A']);
    serve(harness, 2);
    serve(harness, 3);
    expect(results.map((result) => result.kind)).toEqual(Array(4).fill('served'));
    // Four new requests earned the policy's budget once each; the plans again said they were the same requests.
    expect(rebinds.filter((rebind) => !rebind)).toHaveLength(4);
    expect(rebinds.filter((rebind) => rebind).length).toBeGreaterThanOrEqual(2);
  });

  it('fails open: a held request goes to its first choice once no exchange has ended for its timeout, and a page that gives up drops it unsent', () => {
    const harness = new Harness();
    const engine = lateEngine(shortestQueuePolicy([]), harness);
    const results: RunResult<string>[] = [];
    const cancels = Array.from({ length: 4 }, (_, i) => engine.run(engine.plan({ logicalUrl: `u${i}`, method: 'GET', candidates: ['A', 'B'] }, (s) => s), (result) => results.push(result)));
    expect(harness.sent).toHaveLength(2);
    cancels[3]!();
    expect(results.map((result) => result.kind)).toEqual(['aborted']);
    // Both heads come, but no body ever ends (a driver that stopped telling the engine): the held one stays held…
    harness.sent[0]!.events.head({ status: 200, response: 'A0', ttfbMs: 10 });
    harness.sent[1]!.events.head({ status: 200, response: 'B1', ttfbMs: 10 });
    harness.advance(999);
    expect(harness.sent).toHaveLength(2);
    // …until its timeout has passed with nothing ending: then it goes, and the browser would queue it.
    harness.advance(1);
    expect(harness.sent.map((entry) => entry.exchange.server)).toEqual(['A', 'B', 'A']);
    expect(heldCount(engine)).toBe(0);
  });

  it('holds on past its timeout while exchanges keep ending (a long burst moves)', () => {
    const harness = new Harness();
    const engine = new ClientEngine({ policy: { ...shortestQueuePolicy([]), plan: () => ['A', 'B'].map((server) => ({ server, timeoutMs: 1_000, reason: 'A first' })) }, io: harness.io, backgroundTarget: (server) => `${server}/x`, connectionsPerServer: () => 1 });
    for (let i = 0; i < 3; i++) engine.run(engine.plan({ logicalUrl: `u${i}`, method: 'GET', candidates: ['A', 'B'] }, (s) => s), () => undefined);
    // A takes one at a time; the other two wait for it, and each of A's answers takes 600 ms.
    expect(harness.sent.map((entry) => entry.exchange.server)).toEqual(['A']);
    harness.advance(600);
    serve(harness, 0);
    harness.advance(0);
    expect(harness.sent).toHaveLength(2);
    // Past the third one's 1 s timeout: A answered 400 ms ago, so it holds on rather than join the browser's queue.
    harness.advance(500);
    expect(harness.sent).toHaveLength(2);
    harness.advance(100);
    serve(harness, 1);
    harness.advance(0);
    expect(harness.sent.map((entry) => entry.exchange.server)).toEqual(['A', 'A', 'A']);
  });

  it('a policy that does not bind late keeps every request on its first plan (the paper\'s policies, the baselines)', () => {
    const harness = new Harness();
    const engine = lateEngine({ ...shortestQueuePolicy([]), bindsLate: false }, harness);
    for (let i = 0; i < 4; i++) engine.run(engine.plan({ logicalUrl: `u${i}`, method: 'GET', candidates: ['A', 'B'] }, (s) => s), () => undefined);
    expect(harness.sent.map((entry) => entry.exchange.server)).toEqual(['A', 'B', 'A', 'B']);
  });
});
