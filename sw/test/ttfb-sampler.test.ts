import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { TtfbSampler, entryTtfbMs } from '../src/ttfb-sampler.js';
import type { ResourceEntryLike, SampleInput, SampleKind } from '../src/ttfb-sampler.js';

/** Samples waiting for their Resource Timing entry (a private count, read for the test only). */
function pendingSamples(instance: TtfbSampler): number {
  return (instance as unknown as { pendingCount: number }).pendingCount;
}

function sampler(clock = { nowMs: 0 }) {
  const recorded: [string, number, SampleKind][] = [];
  const skipped: string[] = [];
  const instance = new TtfbSampler({
    now: () => clock.nowMs,
    maxWaitMs: 1_000,
    maxPending: 3,
    entriesFedByCaller: true,
    sink: {
      record: (server, ttfbMs, kind) => void recorded.push([server, ttfbMs, kind]),
      skipped: (server) => void skipped.push(server),
    },
  });
  return { instance, recorded, skipped, clock };
}

function sample(url: string, sentAtMs: number, headersAtMs: number, overrides: Partial<SampleInput> = {}): SampleInput {
  return { url, server: new URL(url).origin, kind: 'request', sentAtMs, headersAtMs, mayBeCached: true, ...overrides };
}

function entry(name: string, startTime: number, requestStart: number, responseStart: number, sizes = { transferSize: 420, decodedBodySize: 100 }): ResourceEntryLike {
  return { name, startTime, requestStart, responseStart, ...sizes };
}

describe('TtfbSampler', () => {
  it('takes responseStart − requestStart: the wait in the browser queue before the request went out is not a sample', () => {
    const { instance, recorded } = sampler();
    // fetch() called at 100, headers at 400: but the request only went out at 380 (queued).
    instance.add(sample('http://b/x', 100, 400));
    instance.onEntry(entry('http://b/x', 100.2, 380, 392));
    expect(recorded).toEqual([['http://b', 12, 'request']]);
  });

  it('matches overlapping requests to one URL with their own entries, whatever order the entries come in', () => {
    const { instance, recorded } = sampler();
    instance.add(sample('http://b/x', 10, 300, { kind: 'request' }));
    instance.add(sample('http://b/x', 20, 60, { kind: 'refresh' }));
    // The second request's entry comes first (its body finished first).
    instance.onEntry(entry('http://b/x', 20.1, 40, 55));
    instance.onEntry(entry('http://b/x', 10.1, 270, 290));
    expect(recorded).toEqual([
      ['http://b', 15, 'refresh'],
      ['http://b', 20, 'request'],
    ]);
  });

  it('does not give an entry to a fetch that answered before the entry had its first byte', () => {
    const { instance, recorded } = sampler();
    instance.add(sample('http://b/x', 10, 30));
    instance.onEntry(entry('http://b/x', 10.1, 50, 80)); // another fetch of the URL (e.g. the page's own)
    expect(recorded).toEqual([]);
    instance.onEntry(entry('http://b/x', 10.2, 15, 28));
    expect(recorded).toEqual([['http://b', 13, 'request']]);
  });

  it('drops cache hits (transferSize 0 with a body) and records network responses', () => {
    const { instance, recorded, skipped } = sampler();
    instance.add(sample('http://b/x', 0, 12));
    instance.add(sample('http://b/x', 20, 20.3));
    instance.onEntry(entry('http://b/x', 0, 1, 11));
    instance.onEntry(entry('http://b/x', 20, 20.1, 20.2, { transferSize: 0, decodedBodySize: 100 }));
    expect(recorded).toEqual([['http://b', 10, 'request']]);
    expect(skipped).toEqual(['http://b']);
  });

  it('a sample that cannot be a cache hit (a HEAD probe) is recorded even when the entry says 0 bytes', () => {
    const { instance, recorded, skipped } = sampler();
    instance.add(sample('http://b/x', 0, 9, { mayBeCached: false, kind: 'probe' }));
    instance.onEntry(entry('http://b/x', 0, 2, 8, { transferSize: 0, decodedBodySize: 5 }));
    expect(recorded).toEqual([['http://b', 6, 'probe']]);
    expect(skipped).toEqual([]);
  });

  it("passes on the entry's nextHopProtocol (h2 multiplexes: core's queue-ahead.ts), and nothing when the entry hides it", () => {
    const protocols: (string | undefined)[] = [];
    const instance = new TtfbSampler({
      now: () => 0,
      entriesFedByCaller: true,
      sink: { record: (_server, _ttfbMs, _kind, _body, protocol) => void protocols.push(protocol), skipped: () => undefined },
    });
    instance.add(sample('http://b/x', 0, 12));
    instance.onEntry({ ...entry('http://b/x', 0, 1, 11), nextHopProtocol: 'h2' });
    instance.add(sample('http://c/x', 0, 12));
    instance.onEntry({ ...entry('http://c/x', 0, 0, 0, { transferSize: 0, decodedBodySize: 0 }), responseEnd: 11, nextHopProtocol: '' });
    expect(protocols).toEqual(['h2', undefined]);
  });

  it('an entry without timings (no Timing-Allow-Origin) counts with fetch() → headers', () => {
    const { instance, recorded } = sampler();
    instance.add(sample('http://c/y', 5, 35));
    instance.onEntry(entry('http://c/y', 5, 0, 0, { transferSize: 0, decodedBodySize: 0 }));
    expect(recorded).toEqual([['http://c', 30, 'request']]);
    expect(entryTtfbMs(entry('http://c/y', 5, 0, 0))).toBeUndefined();
  });

  it('records samples whose entry never comes, after maxWaitMs or beyond maxPending, with fetch() → headers', () => {
    const { instance, recorded, clock } = sampler();
    instance.add(sample('http://b/1', 0, 1));
    clock.nowMs = 1_500;
    instance.expire();
    expect(recorded).toEqual([['http://b', 1, 'request']]);
    for (let i = 2; i <= 5; i++) instance.add(sample(`http://b/${i}`, 1_500, 1_500 + i));
    expect(recorded).toHaveLength(2); // four pending, bound three: the oldest went
    expect(recorded[1]).toEqual(['http://b', 2, 'request']);
    expect(pendingSamples(instance)).toBe(3);
  });

  it('drops a waiting sample of an answer older than the server\'s latest failure; keeps newer ones', () => {
    const { instance, recorded, clock } = sampler();
    instance.add(sample('http://b/x', 0, 10)); // answered at 10, body still streaming…
    clock.nowMs = 20;
    instance.noteFailure('http://b'); // …then the body broke off: b failed at 20
    instance.add(sample('http://b/y', 15, 30)); // a later answer: b is up again
    instance.onEntry(entry('http://b/x', 0, 1, 9));
    instance.onEntry(entry('http://b/y', 15, 16, 28));
    expect(recorded).toEqual([['http://b', 12, 'request']]);
  });

  it('ignores entries of requests it did not sample', () => {
    const { instance, recorded, skipped } = sampler();
    instance.onEntry(entry('http://x/other', 0, 1, 2, { transferSize: 0, decodedBodySize: 5 }));
    expect([recorded, skipped]).toEqual([[], []]);
  });

  it('without Resource Timing, records fetch() → headers at once', () => {
    const recorded: number[] = [];
    const instance = new TtfbSampler({ now: () => 0, sink: { record: (_s, ttfbMs) => void recorded.push(ttfbMs), skipped: () => undefined } });
    instance.add(sample('http://b/x', 3, 10));
    expect(recorded).toEqual([7]);
  });

  it('with the platform observer (Node fetch emits Resource Timing), the sample is the entry\'s time to first byte', async () => {
    const server = createServer((_request, response) => setTimeout(() => response.end('ok'), 40));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/r`;
    try {
      const recorded: number[] = [];
      let resolveRecorded!: () => void;
      const done = new Promise<void>((resolve) => (resolveRecorded = resolve));
      const instance = new TtfbSampler({
        now: () => performance.now(),
        sink: { record: (_server, ttfbMs) => (recorded.push(ttfbMs), resolveRecorded()), skipped: () => undefined },
      });
      expect(instance.observeResourceTiming()).toBe(true);
      const sentAtMs = performance.now();
      const response = await fetch(url);
      const headersAtMs = performance.now();
      instance.add({ url, server: new URL(url).origin, kind: 'request', sentAtMs, headersAtMs, mayBeCached: true });
      expect(recorded).toEqual([]); // waits for the entry
      await response.text();
      await done;
      expect(recorded).toHaveLength(1);
      expect(recorded[0]).toBeGreaterThanOrEqual(39);
      expect(recorded[0]).toBeLessThanOrEqual(headersAtMs - sentAtMs);
      expect(pendingSamples(instance)).toBe(0);
      // The observer emptied the global buffer: it cannot fill up.
      expect(performance.getEntriesByType('resource')).toHaveLength(0);
    } finally {
      server.close();
    }
  });
});
