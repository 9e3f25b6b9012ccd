import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { CONNECTIONS_PER_HOST, ConnectionQueue } from '../src/connection-queue.js';
import { TtfbSampler } from '../src/ttfb-sampler.js';
import type { ResourceEntryLike } from '../src/ttfb-sampler.js';

function queue(clock = { nowMs: 0 }) {
  return { instance: new ConnectionQueue({ now: () => clock.nowMs }), clock };
}

/** An entry without Timing-Allow-Origin: only startTime and responseEnd are given. */
function untimedEntry(name: string, startTime: number, responseEnd: number): ResourceEntryLike {
  return { name, startTime, requestStart: 0, responseStart: 0, transferSize: 0, decodedBodySize: 0, responseEnd };
}

describe('ConnectionQueue', () => {
  it('in a burst to one host, the first six go out at once and the rest wait', () => {
    const { instance } = queue();
    const urls = Array.from({ length: 10 }, (_, i) => `http://b.localhost:1/img/${i}.png`);
    for (const url of urls) instance.begin(url);
    expect(urls.map((url) => instance.metNoQueue(url, 0))).toEqual([true, true, true, true, true, true, false, false, false, false]);
  });

  it('a request sent after earlier bodies completed meets no queue', () => {
    const { instance, clock } = queue();
    for (let i = 0; i < 6; i++) instance.begin(`http://b/${i}`);
    clock.nowMs = 100;
    instance.begin('http://b/late');
    expect(instance.metNoQueue('http://b/late', 100)).toBe(false);
    // One body was complete at 80, before the late request was sent (its entry came later).
    instance.onEntry({ name: 'http://b/0', startTime: 0, responseEnd: 80 });
    expect(instance.metNoQueue('http://b/late', 100)).toBe(true);
    // A body complete only after the late request was sent freed nothing for it.
    const other = queue();
    for (let i = 0; i < 6; i++) other.instance.begin(`http://b/${i}`);
    other.clock.nowMs = 100;
    other.instance.begin('http://b/late');
    other.instance.onEntry({ name: 'http://b/0', startTime: 0, responseEnd: 120 });
    expect(other.instance.metNoQueue('http://b/late', 100)).toBe(false);
  });

  it('counts each host on its own', () => {
    const { instance } = queue();
    for (let i = 0; i < 6; i++) instance.begin(`http://b/${i}`);
    instance.begin('http://c/0');
    instance.begin('http://b:8080/0'); // another port is another host
    expect(instance.metNoQueue('http://c/0', 0)).toBe(true);
    expect(instance.metNoQueue('http://b:8080/0', 0)).toBe(true);
    expect(instance.inFlight('http://b/x')).toBe(6);
  });

  it('frees the slot of a fetch that fails or is aborted', async () => {
    const { instance } = queue();
    const failing = instance.track(() => Promise.reject(new TypeError('network error')));
    const hanging = instance.track(() => new Promise<Response>(() => undefined));
    for (let i = 0; i < 3; i++) await failing(new Request(`http://b/fail${i}`)).catch(() => undefined);
    const controllers = Array.from({ length: 3 }, () => new AbortController());
    controllers.forEach((controller, i) => void hanging(new Request(`http://b/hang${i}`, { signal: controller.signal })));
    expect(instance.inFlight('http://b/')).toBe(3);
    for (const controller of controllers) controller.abort();
    expect(instance.inFlight('http://b/')).toBe(0);
    instance.begin('http://b/next');
    expect(instance.metNoQueue('http://b/next', 0)).toBe(true);
  });

  it('a flight forgotten after maxFlightMs (its entry never came) ends, so the engine\'s ledger lets it go', () => {
    const { instance, clock } = queue();
    const request = new Request('http://b/cancelled-body');
    instance.sent(request);
    let ended = 0;
    instance.whenEnded(request, () => void ended++);
    clock.nowMs = 29_000;
    instance.begin('http://b/other');
    expect(ended).toBe(0);
    clock.nowMs = 31_000;
    instance.begin('http://b/later');
    expect(ended).toBe(1);
  });

  it('an entry of a later fetch of the same URL that the queue does not track does not end an older flight', async () => {
    const { instance, clock } = queue();
    const sent = instance.track((request) => Promise.resolve(new Response(request.url)));
    const request = new Request('http://b/big.bin');
    const answered = sent(request);
    let ended = 0;
    instance.whenEnded(request, () => void ended++);
    clock.nowMs = 20;
    await answered; // its head at 20; its body still streams
    // The own origin's answer to the page's own request, fetched by the worker past the queue at 5 s.
    instance.onEntry({ name: 'http://b/big.bin', startTime: 5_000, responseEnd: 5_010 });
    expect([ended, instance.inFlight('http://b/')]).toEqual([0, 1]);
    // Its own entry still ends it.
    instance.onEntry({ name: 'http://b/big.bin', startTime: 0, responseEnd: 6_000 });
    expect([ended, instance.inFlight('http://b/')]).toEqual([1, 0]);
  });

  it('knows nothing of a request it did not see', () => {
    expect(queue().instance.metNoQueue('http://b/x', 0)).toBeUndefined();
  });

  it('judges exactly the requests that waited, for any burst (a six-connection FIFO browser queue)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ gapMs: fc.integer({ min: 0, max: 30 }), durationMs: fc.integer({ min: 1, max: 200 }) }), { minLength: 1, maxLength: 40 }),
        (requests) => {
          const clock = { nowMs: 0 };
          const instance = new ConnectionQueue({ now: () => clock.nowMs });
          // The browser: a request starts when one of six connections is free, in order.
          const slotsFreeAtMs = Array.from({ length: CONNECTIONS_PER_HOST }, () => 0);
          const sent = requests.map((request, i) => {
            clock.nowMs += request.gapMs;
            const url = `http://b/${i}`;
            instance.begin(url);
            slotsFreeAtMs.sort((x, y) => x - y);
            const startMs = Math.max(clock.nowMs, slotsFreeAtMs[0] as number);
            slotsFreeAtMs[0] = startMs + request.durationMs;
            return { url, sentAtMs: clock.nowMs, waitedMs: startMs - clock.nowMs, endMs: startMs + request.durationMs };
          });
          for (const request of sent) instance.onEntry({ name: request.url, startTime: request.sentAtMs, responseEnd: request.endMs });
          for (const request of sent) expect(instance.metNoQueue(request.url, request.sentAtMs)).toBe(request.waitedMs === 0);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('TtfbSampler with a ConnectionQueue (replicas without Timing-Allow-Origin)', () => {
  it('keeps the fetch-timed samples of requests that met no queue and drops the queued ones', () => {
    const clock = { nowMs: 0 };
    const connections = new ConnectionQueue({ now: () => clock.nowMs });
    const recorded: [string, number][] = [];
    const queued: string[] = [];
    const sampler = new TtfbSampler({
      now: () => clock.nowMs,
      entriesFedByCaller: true,
      queue: connections,
      sink: { record: (server, ttfbMs) => void recorded.push([server, ttfbMs]), skipped: () => undefined, queued: (server) => void queued.push(server) },
    });
    // A burst of 12 to a 50 ms replica: six at a time, so the second six answer at 100 ms.
    const urls = Array.from({ length: 12 }, (_, i) => `http://b/img/${i}.png`);
    for (const url of urls) connections.begin(url);
    urls.forEach((url, i) => sampler.add({ url, server: 'http://b', kind: 'request', sentAtMs: 0, headersAtMs: i < 6 ? 50 : 100, mayBeCached: true }));
    // Entries come in one batch, the later ones first.
    sampler.onEntries(urls.map((url, i) => untimedEntry(url, 0, i < 6 ? 52 : 102)).reverse());
    expect(recorded).toEqual(Array.from({ length: 6 }, () => ['http://b', 50]));
    expect(queued).toHaveLength(6);
  });

  it('an untimed entry whose duration is shorter than fetch() → headers (the worker was busy) gives the duration', () => {
    const connections = new ConnectionQueue({ now: () => 0 });
    const recorded: number[] = [];
    const sampler = new TtfbSampler({ now: () => 0, entriesFedByCaller: true, queue: connections, sink: { record: (_s, ttfbMs) => void recorded.push(ttfbMs), skipped: () => undefined } });
    connections.begin('http://b/x');
    sampler.add({ url: 'http://b/x', server: 'http://b', kind: 'request', sentAtMs: 10, headersAtMs: 130, mayBeCached: true });
    sampler.onEntry(untimedEntry('http://b/x', 10, 70));
    expect(recorded).toEqual([60]);
  });

  it('an entry with timings (Timing-Allow-Origin) is used even for a queued request', () => {
    const connections = new ConnectionQueue({ now: () => 0 });
    const recorded: number[] = [];
    const sampler = new TtfbSampler({ now: () => 0, entriesFedByCaller: true, queue: connections, sink: { record: (_s, ttfbMs) => void recorded.push(ttfbMs), skipped: () => undefined } });
    for (let i = 0; i < 7; i++) connections.begin(`http://b/${i}`);
    sampler.add({ url: 'http://b/6', server: 'http://b', kind: 'request', sentAtMs: 0, headersAtMs: 100, mayBeCached: true });
    sampler.onEntry({ name: 'http://b/6', startTime: 0, requestStart: 50, responseStart: 98, transferSize: 300, decodedBodySize: 100, responseEnd: 99 });
    expect(recorded).toEqual([48]);
  });
});
