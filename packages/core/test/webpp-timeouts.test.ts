/**
 * How the webpp policy treats slowness and failure (issue 22 §2): a timeout is a censored
 * sample (Kaplan–Meier), not a value that ratchets the next timeout up; a replica that
 * answers, however slowly, is not ejected; one silent timeout is not yet a dead server, a
 * refused connection is; and a failover after a timeout is never refused for want of a token
 * unless the server says it queues. Driven through the real client engine on a manual clock.
 */
import { describe, expect, it } from 'vitest';
import { ClientEngine, createWebppPolicy } from '@webpp/core';
import type { EngineIO, Exchange, ExchangeEvents, RunResult } from '@webpp/core';
import { LatencySketch } from '../src/policies/webpp/latency-sketch.js';
import { seededRandom, VirtualTimers } from './fake-clock.js';

const T0 = 1_700_000_000_000;
const B = 'http://b.localhost:8082';
const C = 'http://c.localhost:8083';

/** What a server does with one exchange: a head after ttfbMs and the body bodyMs later, or never a head, or a refused connection. */
type Answer = { ttfbMs: number; bodyMs: number } | 'hang' | 'refuse';

/** Servers answering by a script, on a manual clock. */
class ScriptedCluster extends VirtualTimers {
  readonly sent: Exchange[] = [];

  constructor(readonly answer: (exchange: Exchange) => Answer) {
    super(T0);
  }

  readonly io: EngineIO<string> = this.engineIO((exchange: Exchange, events: ExchangeEvents<string>) => {
    this.sent.push(exchange);
    const answer = this.answer(exchange);
    if (answer === 'hang') return () => undefined;
    if (answer === 'refuse') return this.timer(1, () => events.error('refused'));
    const { ttfbMs, bodyMs } = answer;
    let cancelBody: () => void = () => undefined;
    const cancelHead = this.timer(ttfbMs, () => {
      events.head({ status: 200, ttfbMs, response: exchange.server });
      cancelBody = this.timer(bodyMs, () => events.bodyComplete({ bodyBytes: 1_000, bodyMs }));
    });
    return () => {
      cancelHead();
      cancelBody();
    };
  });
}

function client(cluster: ScriptedCluster) {
  // No push: nothing says a server queues; the signs of life are the heads alone.
  const policy = createWebppPolicy({ random: seededRandom(5), now: () => cluster.nowMs }, { pushMaxAgeMs: 0 });
  const engine = new ClientEngine({ policy, io: cluster.io, backgroundTarget: () => undefined, lateBinding: false });
  const start = (path: string, onDone: (result: RunResult<string>) => void = () => undefined) => {
    const plan = engine.plan({ logicalUrl: path, method: 'GET', candidates: [B, C] }, (server) => `${server}${path}`);
    engine.run(plan, onDone);
    return plan;
  };
  /** One request to its end. */
  const request = (path: string): RunResult<string> => {
    let result: RunResult<string> | undefined;
    start(path, (done) => (result = done));
    cluster.runUntil(() => result !== undefined, 60_000);
    if (result === undefined) throw new Error(`${path} never ended`);
    return result;
  };
  const stateOf = (server: string) => policy.describe(cluster.nowMs).find((view) => view.server === server);
  return { policy, engine, start, request, stateOf };
}

/** B answers in 20 ms, C in 300 ms: B is the clear first choice. `trouble` overrides B's answers from then on. */
function cluster(trouble: (exchange: Exchange) => Answer | undefined = () => undefined): ScriptedCluster {
  return new ScriptedCluster((exchange) => trouble(exchange) ?? (exchange.server === B ? { ttfbMs: 20, bodyMs: 5 } : { ttfbMs: 300, bodyMs: 5 }));
}

/** Warms both servers with `count` requests (each served by B) and one straight to C. */
function warm(driver: ReturnType<typeof client>, count = 8): void {
  for (let i = 0; i < count; i++) expect(driver.request(`/warm-${i}`).kind).toBe('served');
}

describe('a timeout is a censored sample: no ratchet', () => {
  it('three timeouts in a row leave the next timeout at 3 × the p99 of the answers (it was 500 → 1 500 → 4 500 ms)', () => {
    const policy = createWebppPolicy({ random: seededRandom(1), now: () => T0 });
    for (let i = 0; i < 10; i++) policy.observe({ server: B, purpose: 'request', outcome: 'served', nowMs: T0 - 5_000 + i * 100, ttfbMs: 100 });
    const timeoutOfB = () => policy.describe(T0).find((view) => view.server === B)!.timeoutMs;
    expect(timeoutOfB()).toBe(500); // 3 × 100 ms, raised to the floor
    const seen: number[] = [];
    for (let i = 1; i <= 3; i++) {
      // B answered another exchange meanwhile: alive, so not ejected, and its timeouts keep coming.
      policy.observe({ server: B, purpose: 'request', outcome: 'timeout', nowMs: T0 - 1_000 + i * 10, answeredWhileWaiting: true });
      seen.push(timeoutOfB()!);
    }
    expect(seen).toEqual([500, 500, 500]);
    expect(policy.describe(T0).find((view) => view.server === B)!.state).not.toBe('failed');
  });

  it('an answer later than the timeouts raises the timeout: their weight passes on to it (Efron\'s redistribution to the right)', () => {
    const sketch = new LatencySketch();
    for (let i = 0; i < 20; i++) sketch.add(100, T0, 7_000);
    // Nothing censored: the product-limit quantile is the plain one.
    expect(sketch.answeredQuantileMs(0.99)).toBeCloseTo(sketch.quantileMs(0.99), 9);
    for (let i = 0; i < 3; i++) sketch.add(500, T0, 7_000, T0, 1, true);
    // Censored beyond every answer: the quantile is of the answers (the hang share is left out).
    expect(sketch.answeredQuantileMs(0.99)).toBeCloseTo(100, -1);
    // Plain quantiles count the censored values as answers at 500 ms.
    expect(sketch.quantileMs(0.99)).toBeGreaterThan(450);
    // One answer at 2 s: the three censored at 500 ms survive to it, so it carries 4/24 of the mass, not 1/24.
    sketch.add(2_000, T0, 7_000);
    expect(sketch.answeredQuantileMs(0.9)).toBeGreaterThan(1_900);
  });
});

describe('one failure or N in a row', () => {
  const timeout = (server: string, nowMs: number) => ({ server, purpose: 'request' as const, outcome: 'timeout' as const, nowMs });

  it('one silent timeout does not eject a replica, two in a row do; one refused connection does', () => {
    const policy = createWebppPolicy({ random: seededRandom(1), now: () => T0 }, { pushMaxAgeMs: 0 });
    const failed = (server: string) => policy.describe(T0).find((view) => view.server === server)?.state === 'failed';
    policy.observe(timeout(B, T0));
    expect(failed(B)).toBe(false);
    policy.observe(timeout(B, T0 + 10));
    expect(failed(B)).toBe(true);
    // A refused connection is what a dead server does: out at once (and probed within 1–2 s).
    policy.observe({ server: C, purpose: 'request', outcome: 'network-error', nowMs: T0 });
    expect(failed(C)).toBe(true);
  });

  it('a stall during a burst does not eject a replica whose other responses are still streaming', () => {
    // After the warm-up, B's first exchange of the burst streams a long body (head at 20 ms, body 10 s);
    // the second hangs. B answered the first while the second waited: alive, not dead.
    let burst = 0;
    const scripted = cluster((exchange) => {
      if (exchange.server !== B || !exchange.target.includes('/burst')) return undefined;
      return burst++ === 0 ? { ttfbMs: 20, bodyMs: 10_000 } : 'hang';
    });
    const driver = client(scripted);
    warm(driver);
    const results: RunResult<string>[] = [];
    driver.start('/burst-1', (result) => results.push(result));
    driver.start('/burst-2', (result) => results.push(result));
    scripted.runUntil(() => results.length === 2, 5_000);
    expect(results.map((result) => result.kind)).toEqual(['served', 'served']);
    // The stalled one timed out on B and was served by C.
    const stalled = results.find((result) => result.kind === 'served' && result.winner.server === C)!;
    expect(stalled.attempts[0]).toMatchObject({ server: B, outcome: 'timeout' });
    // B is not ejected: the next request goes to B first.
    expect(driver.stateOf(B)?.state).not.toBe('failed');
    expect(driver.start('/after')[0]?.server).toBe(B);
  });
});

describe('a failover after a timeout', () => {
  it('is not refused for want of a token: with the budget in debt, it starts at the timeout, not at the 5 s deadline', () => {
    const scripted = cluster((exchange) => (exchange.server === B && exchange.target.includes('/stall') ? 'hang' : undefined));
    const driver = client(scripted);
    warm(driver);
    // The one extra budget at its debt limit (a run of failures before): admitFailover borrows until it cannot.
    for (let i = 0; i < 20; i++) driver.policy.admitFailover?.('http://elsewhere.localhost', scripted.nowMs);
    const startMs = scripted.nowMs;
    const result = driver.request('/stall');
    expect(result.kind).toBe('served');
    if (result.kind !== 'served') return;
    expect(result.winner.server).toBe(C);
    const [first] = result.attempts;
    expect(first).toMatchObject({ server: B, outcome: 'timeout' });
    // B timed out at its own 500 ms and C answered 300 ms later: far from B's 5 s deadline, where the page waited before.
    expect(scripted.nowMs - startMs).toBeLessThan(first!.timeoutMs + 1_000);
    // One failover: two exchanges for the request.
    expect(scripted.sent.filter((exchange) => exchange.target.includes('/stall'))).toHaveLength(2);
  });
});
