/**
 * Which bound requests the worker leaves to the browser (sw/src/direct.ts): the rule's parts
 * one by one, with core's webpp policy and engine as the worker builds them. The page-level
 * behaviour (no respondWith, the page intact, learning again) is e2e/tests/sw-direct.spec.ts.
 */
import type { ResolvedBinding } from '@webpp/core';
import { describe, expect, it } from 'vitest';
import { DirectRoute, parsePageTiming } from '../src/direct.js';
import type { PageTimingEntry } from '../src/direct.js';
import { ReplicaClient } from '../src/replica-client.js';
import { StaleBindings } from '../src/server-memory.js';
import { SizeMemory } from '../src/size-memory.js';
import { memoryKeyValueStore } from '../src/storage.js';

const A = 'http://a.localhost:8081';
const B = 'http://b.localhost:8082';
const C = 'http://c.localhost:8083';
const IMAGE = `${A}/img/1.png`;
const EXPLORE_EVERY_MS = 2_000;

function binding(path: string, servers = [A, B, C], sizeBytes?: number): ResolvedBinding {
  const physicalUrls = servers.map((server) => `${server}${path}`);
  return { logical: `${A}${path}`, physicalUrls, binding: { logical: `${A}${path}`, prefix: false, replicas: physicalUrls, ...(sizeBytes === undefined ? {} : { sizeBytes }) }, directoryVersion: 1 };
}

/** Node's Request cannot be a navigation: what the rule reads of one. */
function navigation(url: string): Request {
  return { url, mode: 'navigate', method: 'GET', headers: new Headers() } as unknown as Request;
}

function setUp(ttfbMs: Record<string, number>) {
  let nowMs = Date.now(); // the policy's clock is Date.now, as in the worker
  const client = new ReplicaClient({ selfOrigin: A, storage: memoryKeyValueStore(), observeResourceTiming: false, publish: () => undefined });
  for (let i = 0; i < 20; i++) {
    for (const [server, ms] of Object.entries(ttfbMs)) client.engine.observe({ server, purpose: 'request', outcome: 'served', nowMs: Date.now(), ttfbMs: ms });
  }
  const sizes = new SizeMemory();
  const staleBindings = new StaleBindings();
  const direct = new DirectRoute({ selfOrigin: A, engine: client.engine, sizes, reporter: client.reporter, resumeMinBytes: 64 * 1_024, exploreEveryMs: EXPLORE_EVERY_MS, enabled: true, staleBindings, now: () => nowMs });
  const page = (id: string, byOwnOrigin = true): void => {
    const request = navigation(`${A}/index.html`);
    direct.noteNavigation(request, id);
    void direct.pageAnswered(request, byOwnOrigin);
  };
  return { client, direct, sizes, staleBindings, page, advance: (ms: number) => void (nowMs += ms) };
}

/** The n-th image: a page asks for each once. */
const image = (n: number): [Request, ResolvedBinding] => [new Request(`${A}/img/${n}.png`), binding(`/img/${n}.png`)];

const entry = (name: string, extra: Partial<PageTimingEntry> = {}): PageTimingEntry => ({
  name,
  requestStart: 100,
  responseStart: 104,
  responseEnd: 105,
  transferSize: 400,
  encodedBodySize: 100,
  decodedBodySize: 100,
  responseStatus: 200,
  ...extra,
});

describe('DirectRoute', () => {
  it('leaves a subresource of an own-origin page to the browser when the own origin is as good as the best, after one exploration request', () => {
    const { direct, client, page, advance } = setUp({ [A]: 5, [B]: 5, [C]: 5 });
    page('p1');
    expect(direct.goesDirect(new Request(IMAGE), binding('/img/1.png'), 'p1')).toBe(false); // the set's exploration request
    for (let i = 2; i < 7; i++) expect(direct.goesDirect(...image(i), 'p1')).toBe(true);
    expect(client.reporter.counters.direct).toBe(5);
    advance(EXPLORE_EVERY_MS);
    expect(direct.goesDirect(...image(7), 'p1')).toBe(false); // the next exploration
    expect(direct.goesDirect(...image(8), 'p1')).toBe(true);
  });

  it('takes a page\'s second request for an image or stylesheet it left to the browser (the page script\'s retry of a failed element): through the worker and its failover', () => {
    const { direct, page } = setUp({ [A]: 5, [B]: 5, [C]: 5 });
    page('p1');
    page('p2');
    const element = (destination: string, url = IMAGE): Request => ({ url, mode: 'no-cors', method: 'GET', destination, headers: new Headers() }) as unknown as Request;
    direct.goesDirect(...image(9), 'p1'); // the set's exploration request
    expect(direct.goesDirect(element('image'), binding('/img/1.png'), 'p1')).toBe(true);
    for (let i = 0; i < 2; i++) expect(direct.goesDirect(element('image'), binding('/img/1.png'), 'p1')).toBe(false);
    const style = `${A}/style.css`;
    expect(direct.goesDirect(element('style', style), binding('/style.css'), 'p1')).toBe(true);
    expect(direct.goesDirect(element('style', style), binding('/style.css'), 'p1')).toBe(false);
    // The page's other URLs, another page's request of the same URL, and a page's repeated fetch() are left as before.
    expect(direct.goesDirect(...image(2), 'p1')).toBe(true);
    expect(direct.goesDirect(element('image'), binding('/img/1.png'), 'p2')).toBe(true);
    // Each page's retry is still the worker's, whichever page had the URL left to it last.
    expect(direct.goesDirect(element('image'), binding('/img/1.png'), 'p1')).toBe(false);
    expect(direct.goesDirect(element('image'), binding('/img/1.png'), 'p2')).toBe(false);
    for (let i = 0; i < 2; i++) expect(direct.goesDirect(element('', `${A}/img/3.png`), binding('/img/3.png'), 'p1')).toBe(true);
  });

  it('never leaves a script to the browser: one that failed there would be skipped, and the page\'s later scripts would run without it', () => {
    const { direct, page } = setUp({ [A]: 5, [B]: 5, [C]: 5 });
    page('p1');
    direct.goesDirect(...image(2), 'p1'); // the set's exploration request
    const script = { url: `${A}/app.js`, mode: 'no-cors', method: 'GET', destination: 'script', headers: new Headers() } as unknown as Request;
    for (let i = 0; i < 3; i++) expect(direct.goesDirect(script, binding('/app.js'), 'p1')).toBe(false);
    expect(direct.goesDirect(new Request(IMAGE), binding('/img/1.png'), 'p1')).toBe(true);
  });

  it('keeps the request with the worker when another replica is clearly better', () => {
    const { direct, page } = setUp({ [A]: 200, [B]: 5, [C]: 5 });
    page('p1');
    for (let i = 0; i < 3; i++) expect(direct.goesDirect(new Request(IMAGE), binding('/img/1.png'), 'p1')).toBe(false);
  });

  it('keeps every request of a page whose navigation another replica served, or that the worker never saw', () => {
    const { direct, page } = setUp({ [A]: 5, [B]: 5, [C]: 5 });
    page('p1', false);
    for (let i = 0; i < 3; i++) {
      expect(direct.goesDirect(new Request(IMAGE), binding('/img/1.png'), 'p1')).toBe(false);
      expect(direct.goesDirect(new Request(IMAGE), binding('/img/1.png'), 'unknown')).toBe(false);
      expect(direct.goesDirect(new Request(IMAGE), binding('/img/1.png'), undefined)).toBe(false);
    }
  });

  it('keeps ranges, large bodies, other methods and URLs the own origin does not hold under the same URL', () => {
    const { direct, page, sizes } = setUp({ [A]: 5, [B]: 5, [C]: 5 });
    page('p1');
    direct.goesDirect(new Request(IMAGE), binding('/img/1.png'), 'p1'); // the exploration request
    expect(direct.goesDirect(new Request(IMAGE, { headers: { range: 'bytes=0-9' } }), binding('/img/1.png'), 'p1')).toBe(false);
    expect(direct.goesDirect(new Request(IMAGE, { method: 'HEAD' }), binding('/img/1.png'), 'p1')).toBe(false);
    expect(direct.goesDirect(new Request(`${A}/big.bin`), binding('/big.bin', [A, B, C], 1_000_000), 'p1')).toBe(false);
    sizes.learnBytes(`${A}/learnt.bin`, 500_000);
    expect(direct.goesDirect(new Request(`${A}/learnt.bin`), binding('/learnt.bin'), 'p1')).toBe(false);
    expect(direct.goesDirect(new Request(`${A}/b-only.png`), binding('/b-only.png', [B, C]), 'p1')).toBe(false);
    expect(direct.goesDirect(new Request(IMAGE), binding('/img/1.png'), 'p1')).toBe(true);
  });

  it('learns the own origin from the page\'s Resource Timing of requests it left, and stops after a failed element', () => {
    const { direct, client, page } = setUp({ [A]: 5, [B]: 5, [C]: 5 });
    page('p1');
    direct.goesDirect(new Request(IMAGE), binding('/img/1.png'), 'p1'); // the exploration request
    expect(direct.goesDirect(new Request(IMAGE), binding('/img/1.png'), 'p1')).toBe(true);
    const samplesBefore = client.policy.describe(Date.now()).find((view) => view.server === A)!.sampleCount;
    // An entry of a URL never left to the browser teaches nothing; the left one is a sample of A.
    void direct.report('p1', [entry(`${A}/other.png`), entry(IMAGE, { requestStart: 100, responseStart: 105 })], []);
    expect(client.reporter.counters.directSamples).toBe(1);
    expect(client.policy.describe(Date.now()).find((view) => view.server === A)!.sampleCount).toBe(samplesBefore + 1);
    // The page says an element failed: its further requests stay with the worker.
    expect(direct.goesDirect(...image(2), 'p1')).toBe(true);
    void direct.report('p1', [], [IMAGE]);
    expect(direct.goesDirect(...image(3), 'p1')).toBe(false);
  });

  it('samples each request left to the browser once', () => {
    const { direct, client, page } = setUp({ [A]: 5, [B]: 5, [C]: 5 });
    page('p1');
    page('p2');
    direct.goesDirect(...image(2), 'p1'); // the exploration request
    expect(direct.goesDirect(new Request(IMAGE), binding('/img/1.png'), 'p1')).toBe(true);
    expect(direct.goesDirect(new Request(IMAGE), binding('/img/1.png'), 'p2')).toBe(true);
    // Two left, three entries posted (one of a request the worker answered): two samples.
    void direct.report('p1', [entry(IMAGE), entry(IMAGE), entry(IMAGE)], []);
    expect(client.reporter.counters.directSamples).toBe(2);
  });

  it('a request it left that the own origin answered 404 keeps the page\'s further requests with the worker, as a failed element does (heard or not)', () => {
    const { direct, page } = setUp({ [A]: 5, [B]: 5, [C]: 5 });
    page('p1');
    page('p2');
    direct.goesDirect(new Request(IMAGE), binding('/img/1.png'), 'p1'); // the exploration request
    expect(direct.goesDirect(new Request(IMAGE), binding('/img/1.png'), 'p1')).toBe(true);
    // The page script posts the entry, but heard no `error` event (it ran after the image failed).
    void direct.report('p1', [entry(IMAGE, { responseStatus: 404 })], []);
    expect(direct.goesDirect(new Request(`${A}/img/2.png`), binding('/img/2.png'), 'p1')).toBe(false);
    // Another page the own origin served is not concerned.
    expect(direct.goesDirect(new Request(`${A}/img/2.png`), binding('/img/2.png'), 'p2')).toBe(true);
  });

  it('keeps a URL whose own-origin copy answered 404/410 under this directory version with the worker (the plan asks another replica first)', () => {
    const { direct, page, staleBindings } = setUp({ [A]: 5, [B]: 5, [C]: 5 });
    page('p1');
    direct.goesDirect(new Request(IMAGE), binding('/img/1.png'), 'p1'); // the exploration request
    staleBindings.note(IMAGE, 1); // the worker's own attempt got a 404 from the own origin (server-memory.ts)
    for (let i = 0; i < 3; i++) expect(direct.goesDirect(new Request(IMAGE), binding('/img/1.png'), 'p1')).toBe(false);
    expect(direct.goesDirect(new Request(`${A}/img/2.png`), binding('/img/2.png'), 'p1')).toBe(true);
    // Newer bindings: the own origin may hold it now.
    expect(direct.goesDirect(new Request(IMAGE), { ...binding('/img/1.png'), directoryVersion: 2 }, 'p1')).toBe(true);
  });

  it('a 404 or 410 the page reports for a request it left makes that URL stale: its next request goes through the worker', () => {
    const { direct, page } = setUp({ [A]: 5, [B]: 5, [C]: 5 });
    page('p1');
    direct.goesDirect(new Request(IMAGE), binding('/img/1.png'), 'p1'); // the exploration request
    expect(direct.goesDirect(new Request(IMAGE), binding('/img/1.png'), 'p1')).toBe(true);
    expect(direct.goesDirect(new Request(`${A}/img/2.png`), binding('/img/2.png'), 'p1')).toBe(true);
    void direct.report('p1', [entry(IMAGE, { responseStatus: 404 }), entry(`${A}/img/2.png`, { responseStatus: 410 })], []);
    page('p2'); // the next page, also answered by the own origin
    expect(direct.goesDirect(new Request(IMAGE), binding('/img/1.png'), 'p2')).toBe(false);
    expect(direct.goesDirect(new Request(`${A}/img/2.png`), binding('/img/2.png'), 'p2')).toBe(false);
    expect(direct.goesDirect(new Request(`${A}/img/3.png`), binding('/img/3.png'), 'p2')).toBe(true);
  });

  it('never leaves a request for another origin to the browser, even when the own origin is the plan\'s sole first choice for it', () => {
    const { direct, page } = setUp({ [A]: 5, [B]: 5, [C]: 5 });
    page('p1');
    direct.goesDirect(new Request(IMAGE), binding('/img/1.png'), 'p1'); // the exploration request
    // The own origin's bindings name a logical URL of another origin (C), held by C and by the own origin.
    const foreign: ResolvedBinding = { logical: `${C}/lib.js`, physicalUrls: [`${C}/lib.js`, `${A}/lib.js`], binding: { logical: `${C}/lib.js`, prefix: false, replicas: [`${C}/lib.js`, `${A}/lib.js`] }, directoryVersion: 1 };
    for (let i = 0; i < 3; i++) expect(direct.goesDirect(new Request(`${C}/lib.js`), foreign, 'p1')).toBe(false);
  });

  it('keeps what it knows of each page across a worker restart: an own-origin page goes direct again, a failed one does not', async () => {
    const storage = memoryKeyValueStore();
    const { client, staleBindings } = setUp({ [A]: 5, [B]: 5, [C]: 5 });
    const route = (): DirectRoute => new DirectRoute({ selfOrigin: A, engine: client.engine, sizes: new SizeMemory(), reporter: client.reporter, resumeMinBytes: 64 * 1_024, exploreEveryMs: EXPLORE_EVERY_MS, enabled: true, staleBindings, storage, flushDelayMs: 60_000 });
    const persistent = route();
    for (const [id, own] of [['p1', true], ['p2', false], ['p3', true]] as const) {
      const request = navigation(`${A}/index.html`);
      persistent.noteNavigation(request, id);
      void persistent.pageAnswered(request, own);
    }
    void persistent.report('p3', [], [IMAGE]); // an element of p3 failed
    await persistent.flushNow();
    // The worker stops; a new one reads the stored state (malformed entries are dropped).
    const restarted = route();
    const stored = await storage.get('pages');
    restarted.restore([...(stored as unknown[]), ['p4'], 'x', [5, true]]);
    expect(restarted.goesDirect(new Request(IMAGE), binding('/img/1.png'), 'p1')).toBe(false); // the set's exploration request
    expect(restarted.goesDirect(new Request(IMAGE), binding('/img/1.png'), 'p1')).toBe(true);
    for (const other of ['p2', 'p3', 'p4']) expect(restarted.goesDirect(new Request(IMAGE), binding('/img/1.png'), other)).toBe(false);
    // What the new worker learned before its state came back wins over what was stored.
    const early = route();
    void early.report('p1', [], [IMAGE]);
    early.restore(stored);
    for (let i = 0; i < 2; i++) expect(early.goesDirect(new Request(IMAGE), binding('/img/1.png'), 'p1')).toBe(false);
  });

  it('is off where offline copies need every answer', () => {
    const client = new ReplicaClient({ selfOrigin: A, storage: memoryKeyValueStore(), observeResourceTiming: false, publish: () => undefined });
    const direct = new DirectRoute({ selfOrigin: A, engine: client.engine, sizes: new SizeMemory(), reporter: client.reporter, resumeMinBytes: 1, exploreEveryMs: 0, enabled: false, staleBindings: new StaleBindings() });
    expect(direct.goesDirect(new Request(IMAGE), binding('/img/1.png'), 'p1')).toBe(false);
  });
});

describe('parsePageTiming', () => {
  it('keeps well-formed entries and URLs, and drops the rest', () => {
    const posted = (e: PageTimingEntry): unknown[] => [e.name, e.requestStart, e.responseStart, e.responseEnd, e.transferSize, e.encodedBodySize, e.decodedBodySize, e.responseStatus];
    const parsed = parsePageTiming({ type: 'webpp:timing', entries: [posted(entry(IMAGE)), [3], null, { name: IMAGE }, [`${A}/x`, -1, 'no']], failed: [IMAGE, 5] });
    expect(parsed.entries[0]).toEqual(entry(IMAGE));
    expect(parsed.entries).toHaveLength(2);
    expect(parsed.entries[1]).toMatchObject({ name: `${A}/x`, requestStart: 0, responseStart: 0 });
    expect(parsed.failedUrls).toEqual([IMAGE]);
    expect(parsePageTiming({})).toEqual({ entries: [], failedUrls: [] });
  });
});
