/**
 * Each replica's protocol (issue 22 §2, bursts): a browser sends at most six requests at once
 * to an HTTP/1.1 host, but multiplexes every request to an h2/h3 host on one connection
 * (RFC 9113 §5.1.2; Chromium's 100 streams before the server's SETTINGS). The policy learns
 * the protocol from its samples (the worker's Resource Timing nextHopProtocol; the
 * simulator's world) and counts the connection wait of the client's own queue only where
 * there is one.
 */
import { describe, expect, it } from 'vitest';
import { ClientEngine, createWebppPolicy, type EngineIO, type Exchange, type ExchangeEvents, type InFlightExchange } from '@webpp/core';
import { seededRandom } from './fake-clock.js';

const A = 'http://a.localhost:8081';
const KB = 1024;
const T0 = 1_700_000_000_000;

type Policy = ReturnType<typeof createWebppPolicy>;

/** 12 served requests on `server` (20 ms first byte, 64 KB bodies at 4 MB/s), over `protocol` when given. */
function teach(policy: Policy, server: string, protocol?: string): number {
  let nowMs = T0;
  for (let i = 0; i < 12; i++) {
    nowMs += 50;
    policy.observe({ server, purpose: 'request', outcome: 'served', nowMs: nowMs + 36, ttfbMs: 20, bodyBytes: 64 * KB, bodyMs: 16, ...(protocol ? { protocol } : {}) });
  }
  return nowMs + 1_000;
}

/** The timeout of a 1 KB request on A with `ahead` of this client's exchanges to A in flight (sent just now). */
function timeoutWithQueue(policy: Policy, nowMs: number, ahead: number): number {
  const inFlight: InFlightExchange[] = Array.from({ length: ahead }, () => ({ server: A, sizeBytes: 1 * KB, sentAtMs: nowMs - 1 }));
  const plan = policy.plan({ logicalUrl: '/r.css', method: 'GET', candidates: [A], sizeBytes: 1 * KB, nowMs, inFlight });
  return plan[0]!.timeoutMs;
}

describe("a replica's protocol in the client's own queue", () => {
  it('over HTTP/1.1 (or not known) twelve exchanges ahead wait two rounds of six connections; over h2 none', () => {
    const unknown = createWebppPolicy({ random: seededRandom(1), now: () => T0 });
    const h1 = createWebppPolicy({ random: seededRandom(1), now: () => T0 });
    const h2 = createWebppPolicy({ random: seededRandom(1), now: () => T0 });
    const nowMs = teach(unknown, A);
    teach(h1, A, 'http/1.1');
    teach(h2, A, 'h2');
    expect(h2.describe(nowMs).find((view) => view.server === A)?.protocol).toBe('h2');
    expect(unknown.describe(nowMs).find((view) => view.server === A)?.protocol).toBeUndefined();
    // Twelve 1 KB exchanges ahead: their link share is a few ms; the connection wait is 2 × 20 ms over HTTP/1.1.
    for (const policy of [unknown, h1]) expect(timeoutWithQueue(policy, nowMs, 12) - timeoutWithQueue(policy, nowMs, 0)).toBeGreaterThanOrEqual(40);
    expect(timeoutWithQueue(h2, nowMs, 12) - timeoutWithQueue(h2, nowMs, 0)).toBeLessThan(10);
  });

  it('a timeout behind six exchanges is the client\'s own queue over HTTP/1.1, the server\'s failure over h2', () => {
    for (const [protocol, state] of [['http/1.1', 'available'], ['h2', 'failed']] as const) {
      const policy = createWebppPolicy({ random: seededRandom(1), now: () => T0 });
      const nowMs = teach(policy, A, protocol) + 10_000; // no answer from A for seconds
      // Twice: a silent timeout is a failure, and the second in a row ejects (server-record.ts, SILENT_FAILURES_TO_EJECT).
      policy.observe({ server: A, purpose: 'request', outcome: 'timeout', nowMs, queuedAhead: 6 });
      policy.observe({ server: A, purpose: 'request', outcome: 'timeout', nowMs: nowMs + 1, queuedAhead: 6 });
      expect(policy.describe(nowMs).find((view) => view.server === A)?.state, protocol).toBe(state);
    }
  });

  it('the engine passes a head\'s protocol (ExchangeHead.protocol, the simulator\'s) into the exchange\'s sample', () => {
    const sent: { exchange: Exchange; events: ExchangeEvents<string> }[] = [];
    const io: EngineIO<string> = { now: () => T0, setTimer: () => () => undefined, send: (exchange, events) => (sent.push({ exchange, events }), () => undefined) };
    const policy = createWebppPolicy({ random: seededRandom(1), now: () => T0 });
    const engine = new ClientEngine({ policy, io, backgroundTarget: () => undefined });
    engine.run(engine.plan({ logicalUrl: '/r', method: 'GET', candidates: [A], sizeBytes: 64 * KB }, (server) => server), () => undefined);
    sent[0]!.events.head({ status: 200, ttfbMs: 5, protocol: 'h2', response: 'ok' });
    sent[0]!.events.bodyComplete({ bodyBytes: 64 * KB, bodyMs: 10 });
    expect(policy.describe(T0).find((view) => view.server === A)?.protocol).toBe('h2');
  });
});
