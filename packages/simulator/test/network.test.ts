import { compileScenario, parseScenario, type Scenario } from '@webpp/netem/model';
import { describe, expect, it } from 'vitest';
import { EventQueue } from '../src/event-queue.js';
import { SimulatedNetwork, type Exchange } from '../src/network.js';

describe('EventQueue', () => {
  it('runs events in time order, same-time events in scheduling order, and skips cancelled ones', () => {
    const queue = new EventQueue();
    const seen: string[] = [];
    queue.at(20, () => seen.push(`b@${queue.now()}`));
    queue.at(10, () => seen.push(`a@${queue.now()}`));
    queue.at(20, () => seen.push(`c@${queue.now()}`));
    const cancelled = queue.at(15, () => seen.push('never'));
    queue.cancel(cancelled);
    queue.at(10, () => queue.after(0, () => seen.push(`d@${queue.now()}`)));
    queue.run();
    expect(seen).toEqual(['a@10', 'd@10', 'b@20', 'c@20']);
  });

  it('never schedules into the past and stops when asked', () => {
    const queue = new EventQueue();
    const seen: number[] = [];
    queue.at(50, () => queue.at(10, () => seen.push(queue.now())));
    queue.at(60, () => seen.push(queue.now()));
    queue.run();
    expect(seen).toEqual([50, 60]);
    queue.at(100, () => seen.push(1));
    queue.at(200, () => seen.push(2));
    queue.run(() => seen.length >= 3);
    expect(seen).toEqual([50, 60, 1]);
  });
});

const scenario = (servers: Scenario['servers']): Scenario => parseScenario({ formatVersion: 1, name: 't', durationMs: 10_000, servers });

function harness(servers: Scenario['servers'], serviceMs = 0) {
  const queue = new EventQueue();
  const network = new SimulatedNetwork({ queue, servers: compileScenario(scenario(servers)), seed: 1, serviceMs });
  const events: string[] = [];
  const send = (exchange: Partial<Exchange> & { server: string }, atMs = 0): void => {
    queue.at(atMs, () =>
      network.send(
        { method: 'GET', bodyBytes: 0, key: 'k', purpose: 'request', ...exchange },
        {
          onFirstByte: (t) => events.push(`${exchange.server}:first@${t}`),
          onComplete: (t) => events.push(`${exchange.server}:complete@${t}`),
          onError: (t) => events.push(`${exchange.server}:error@${t}`),
          onStall: (t, resumes) => events.push(`${exchange.server}:stall@${t}->${resumes}`),
        },
      ),
    );
  };
  return { queue, network, events, send };
}

describe('SimulatedNetwork', () => {
  it('delivers the first byte after delay + service time, the body at the link bandwidth', () => {
    const { queue, events, send } = harness({ A: { link: { delayMs: 100, bandwidthBytesPerSec: 50_000 } } }, 2);
    send({ server: 'A', bodyBytes: 100_000 });
    send({ server: 'A', method: 'HEAD', bodyBytes: 100_000 }, 5);
    queue.run();
    expect(events).toEqual(['A:first@102', 'A:first@107', 'A:complete@107', 'A:complete@2102']);
  });

  it('fails at once during a reset/refuse outage, and at the end of a hang outage', () => {
    const { queue, events, send } = harness({
      A: { link: { delayMs: 10 }, outages: [{ fromMs: 0, toMs: 500, mode: 'refuse' }] },
      B: { link: { delayMs: 10 }, outages: [{ fromMs: 0, toMs: 500, mode: 'hang' }] },
    });
    send({ server: 'A' }, 100);
    send({ server: 'B' }, 100);
    send({ server: 'A' }, 600);
    queue.run();
    expect(events).toEqual(['A:error@100', 'B:error@500', 'A:first@610', 'A:complete@610']);
  });

  it('cuts off responses in flight when an outage starts', () => {
    const { queue, events, send } = harness({
      A: { link: { delayMs: 10, bandwidthBytesPerSec: 1000 }, outages: [{ fromMs: 500, toMs: 800, mode: 'reset' }] },
      B: { link: { delayMs: 10, bandwidthBytesPerSec: 1000 }, outages: [{ fromMs: 500, toMs: 800, mode: 'hang' }] },
      C: { link: { delayMs: 1000 }, outages: [{ fromMs: 500, toMs: 800, mode: 'reset' }] },
      D: { link: { delayMs: 1000 }, outages: [{ fromMs: 500, toMs: 800, mode: 'hang' }] },
    });
    send({ server: 'A', bodyBytes: 1000 });
    send({ server: 'B', bodyBytes: 1000 });
    send({ server: 'C' });
    send({ server: 'D' });
    queue.run();
    expect(events).toEqual([
      'A:first@10',
      'B:first@10',
      'A:error@500',
      'B:stall@500->null',
      'C:error@500',
      'D:stall@500->null',
      'B:error@800',
      'D:error@800',
    ]);
  });

  it('reports body stalls with the time the bytes resume', () => {
    const { queue, events, send } = harness({
      A: { link: { delayMs: 0, bandwidthBytesPerSec: 1000, stall: { probability: 1, durationMs: 300, phase: 'body' } } },
    });
    send({ server: 'A', bodyBytes: 1000 });
    queue.run();
    expect(events[0]).toBe('A:first@0');
    const stall = /^A:stall@([\d.]+)->([\d.]+)$/.exec(events[1]!)!;
    expect(Number(stall[2]) - Number(stall[1])).toBeCloseTo(300, 6);
    expect(events[2]).toBe('A:complete@1300');
  });

  it('draws common random numbers: the same key on the same server gets the same luck', () => {
    const jittery = { link: { delayMs: { distribution: 'lognormal' as const, meanMs: 100, stdDevMs: 50 } } };
    const { queue, network } = harness({ A: jittery, B: jittery });
    const firstByteMs = new Map<string, number>();
    const probe = (server: string, key: string, label: string): void => {
      queue.at(0, () => network.send({ server, method: 'GET', bodyBytes: 0, key, purpose: 'request' }, { onFirstByte: (t) => firstByteMs.set(label, t) }));
    };
    probe('A', 'c0|7', 'A7');
    probe('A', 'c0|7', 'A7 again');
    probe('A', 'c0|8', 'A8');
    probe('B', 'c0|7', 'B7');
    queue.run();
    expect(firstByteMs.get('A7 again')).toBe(firstByteMs.get('A7'));
    expect(firstByteMs.get('A8')).not.toBe(firstByteMs.get('A7'));
    expect(firstByteMs.get('B7')).not.toBe(firstByteMs.get('A7'));
  });

  it('counts exchanges by purpose and forgets cancelled ones', () => {
    const { queue, network, events } = harness({ A: { link: { delayMs: 10 } } });
    queue.at(0, () => {
      network.send({ server: 'A', method: 'HEAD', bodyBytes: 0, key: 'x', purpose: 'probe' }, { onFirstByte: (t) => events.push(`probe@${t}`) });
      const handle = network.send({ server: 'A', method: 'GET', bodyBytes: 0, key: 'y', purpose: 'hedge' }, { onFirstByte: (t) => events.push(`hedge@${t}`) });
      handle.cancel();
    });
    queue.run();
    expect(events).toEqual(['probe@10']);
    expect(network.counts).toMatchObject({ probe: 1, hedge: 1, request: 0 });
    expect(() => network.send({ server: 'Z', method: 'GET', bodyBytes: 0, key: 'z', purpose: 'request' }, {})).toThrow(/unknown server/);
  });
});
