import { compileScenario, parseScenario, type Scenario } from '@webpp/netem/model';
import { describe, expect, it } from 'vitest';
import { EventQueue } from '../src/event-queue.js';
import { SimulatedNetwork, type Exchange, type ExchangeHandle } from '../src/network.js';

/** One or two servers with a constant 10 ms round trip and no jitter: every time below is hand-computed. */
function harness(servers: Scenario['servers'], connectionsPerHost?: number) {
  const queue = new EventQueue();
  const scenario = parseScenario({ formatVersion: 1, name: 't', durationMs: 60_000, servers });
  const network = new SimulatedNetwork({ queue, servers: compileScenario(scenario), seed: 1, ...(connectionsPerHost === undefined ? {} : { connectionsPerHost }) });
  const done = new Map<string, number>();
  const heads = new Map<string, { atMs: number; status: number }>();
  const handles = new Map<string, ExchangeHandle>();
  const send = (key: string, atMs: number, exchange: Partial<Exchange> = {}): void => {
    queue.at(atMs, () => {
      handles.set(
        key,
        network.send(
          { server: 'A', method: 'GET', bodyBytes: 100_000, key, purpose: 'request', ...exchange },
          {
            onFirstByte: (t, _pushed, status = 200) => heads.set(key, { atMs: t, status }),
            onComplete: (t) => done.set(key, t),
            onError: (t) => done.set(key, -t),
          },
        ),
      );
    });
  };
  return { queue, network, send, done, heads, handles };
}

const link = (bandwidthBytesPerSec: number | null) => ({ delayMs: 10, bandwidthBytesPerSec });

describe('a shared link (processor sharing)', () => {
  it('gives each of two bodies half the bandwidth: two 100 KB bodies on 100 kB/s end together at 2 s', () => {
    const { queue, send, done } = harness({ A: { link: link(100_000), linkSharing: 'shared' } });
    send('x', 0);
    send('y', 0);
    queue.run();
    expect(done.get('x')).toBeCloseTo(10 + 2_000, 6);
    expect(done.get('y')).toBeCloseTo(10 + 2_000, 6);
  });

  it('shares from the moment the second body starts, and gives the first one back the whole link when it is done', () => {
    // x alone from 10 ms to 510 ms (50 KB), then both at 50 kB/s: x's other 50 KB take 1 s (1 510 ms);
    // y has 50 KB by then and the rest alone at 100 kB/s: 500 ms more (2 010 ms).
    const { queue, send, done } = harness({ A: { link: link(100_000), linkSharing: 'shared' } });
    send('x', 0);
    send('y', 500);
    queue.run();
    expect(done.get('x')).toBeCloseTo(1_510, 6);
    expect(done.get('y')).toBeCloseTo(2_010, 6);
  });

  it('frees the share of a cancelled body and counts only the bytes it had delivered', () => {
    // Both share from 10 ms; y is cancelled at 510 ms with 25 KB delivered; x has 75 KB left alone: 750 ms more.
    const { queue, network, send, done, handles } = harness({ A: { link: link(100_000), linkSharing: 'shared' } });
    send('x', 0);
    send('y', 0);
    queue.at(510, () => handles.get('y')!.cancel());
    queue.run();
    expect(done.get('x')).toBeCloseTo(1_260, 6);
    expect(done.has('y')).toBe(false);
    expect(network.bytesDelivered).toBeCloseTo(125_000, 3);
  });

  it('leaves the paper\'s model alone: per-response bandwidth gives each body the whole link', () => {
    const { queue, send, done } = harness({ A: { link: link(100_000) } });
    send('x', 0);
    send('y', 0);
    queue.run();
    expect(done.get('x')).toBeCloseTo(1_010, 6);
    expect(done.get('y')).toBeCloseTo(1_010, 6);
  });

  it('cuts the bodies on the link when an outage starts, counting their bytes so far', () => {
    const { queue, network, send, done } = harness({ A: { link: link(100_000), linkSharing: 'shared', outages: [{ fromMs: 1_010, toMs: 5_000 }] } });
    send('x', 0);
    send('y', 0);
    queue.run();
    expect(done.get('x')).toBe(-1_010);
    expect(done.get('y')).toBe(-1_010);
    expect(network.bytesDelivered).toBeCloseTo(100_000, 3);
  });
});

describe('connections per host (HTTP/1.1)', () => {
  it('sends at most six requests to a host at once; the seventh and eighth wait for a free connection', () => {
    const { queue, network, send, done } = harness({ A: { link: link(null) } }, 6);
    for (let i = 0; i < 8; i++) send(`r${i}`, 0, { bodyBytes: 1_000 });
    queue.run();
    expect([...done.values()].filter((t) => t === 10)).toHaveLength(6);
    expect([...done.values()].filter((t) => t === 20)).toHaveLength(2);
    expect(network.pool!.peakInUse('A')).toBe(6);
  });

  it('queues nothing without a limit (HTTP/2 streams)', () => {
    const { queue, send, done } = harness({ A: { link: link(null) } });
    for (let i = 0; i < 8; i++) send(`r${i}`, 0, { bodyBytes: 1_000 });
    queue.run();
    expect([...done.values()].every((t) => t === 10)).toBe(true);
  });

  it('frees the connection of a cancelled request, and withdraws a waiting one that is cancelled', () => {
    const { queue, network, send, done, handles } = harness({ A: { link: link(1_000) } }, 1);
    send('slow', 0, { bodyBytes: 10_000 }); // would hold the connection until 10 010 ms
    send('withdrawn', 0, { bodyBytes: 1 });
    send('next', 0, { bodyBytes: 1 });
    queue.at(100, () => {
      handles.get('withdrawn')!.cancel();
      handles.get('slow')!.cancel();
    });
    queue.run();
    expect(done.has('slow')).toBe(false);
    expect(done.has('withdrawn')).toBe(false);
    expect(done.get('next')).toBeCloseTo(100 + 10 + 1, 6);
    expect(network.pool!.waitingFor('A')).toBe(0);
  });
});

describe('brownouts', () => {
  it('answer a share of the requests with a quick 5xx after the round trip, and the rest normally', () => {
    const { queue, send, heads } = harness({ A: { link: link(null), brownouts: [{ fromMs: 0, toMs: 1_000, errorProbability: 0.5, status: 502 }] } });
    for (let i = 0; i < 200; i++) send(`r${i}`, 0, { bodyBytes: 1 });
    send('after', 2_000, { bodyBytes: 1 });
    queue.run();
    const shed = [...heads.entries()].filter(([, head]) => head.status === 502);
    expect(shed.length).toBeGreaterThan(60);
    expect(shed.length).toBeLessThan(140);
    expect(shed.every(([, head]) => head.atMs === 10)).toBe(true);
    expect(heads.get('after')!.status).toBe(200);
  });
});
