import { describe, expect, it } from 'vitest';
import { TtfbSampler } from '../src/ttfb-sampler.js';

function sampler(clock = { nowMs: 0 }) {
  const recorded: [string, number][] = [];
  const skipped: string[] = [];
  const instance = new TtfbSampler({
    now: () => clock.nowMs,
    maxWaitMs: 1_000,
    maxPending: 3,
    entriesFedByCaller: true,
    sink: { record: (server, ttfbMs) => void recorded.push([server, ttfbMs]), skipped: (server) => void skipped.push(server) },
  });
  return { instance, recorded, skipped, clock };
}

describe('TtfbSampler', () => {
  it('drops cache hits (transferSize 0 with a body) and records network responses', () => {
    const { instance, recorded, skipped } = sampler();
    instance.add('http://b/x', 'http://b', 12, true);
    instance.add('http://b/x', 'http://b', 0.3, true);
    instance.onEntry({ name: 'http://b/x', transferSize: 420, decodedBodySize: 100 });
    instance.onEntry({ name: 'http://b/x', transferSize: 0, decodedBodySize: 100 });
    expect(recorded).toEqual([['http://b', 12]]);
    expect(skipped).toEqual(['http://b']);
  });

  it('records at once what cannot come from the cache', () => {
    const { instance, recorded } = sampler();
    instance.add('http://b/x', 'http://b', 7, false);
    expect(recorded).toEqual([['http://b', 7]]);
  });

  it('counts an entry without timing details (no Timing-Allow-Origin) as a network sample', () => {
    const { instance, recorded } = sampler();
    instance.add('http://c/y', 'http://c', 30, true);
    instance.onEntry({ name: 'http://c/y', transferSize: 0, decodedBodySize: 0 });
    expect(recorded).toEqual([['http://c', 30]]);
  });

  it('records samples whose entry never comes, after maxWaitMs or beyond maxPending', () => {
    const { instance, recorded, clock } = sampler();
    instance.add('http://b/1', 'http://b', 1, true);
    clock.nowMs = 1_500;
    instance.expire();
    expect(recorded).toEqual([['http://b', 1]]);
    for (let i = 2; i <= 5; i++) instance.add(`http://b/${i}`, 'http://b', i, true);
    expect(recorded.length).toBeGreaterThanOrEqual(2); // the pending bound pushed the oldest out
  });

  it('ignores entries of requests it did not sample', () => {
    const { instance, recorded, skipped } = sampler();
    instance.onEntry({ name: 'http://x/other', transferSize: 0, decodedBodySize: 5 });
    expect([recorded, skipped]).toEqual([[], []]);
  });
});
