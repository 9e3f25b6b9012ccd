/**
 * Engine v3 (issue 22 §2), one decision per block: unknown sizes, the client's own queue
 * (bursts, queue-aware timeouts), deciding again at the response head, brownouts and
 * recovery. Each builds the policy's knowledge from samples, as the engine would feed them.
 */
import { describe, expect, it } from 'vitest';
import { ClientEngine, createWebppPolicy, type EngineIO, type Exchange, type ExchangeEvents, type InFlightExchange } from '@webpp/core';
import { SizeEstimates } from '../src/policies/webpp/size-estimate.js';
import { seededRandom } from './fake-clock.js';

const A = 'http://a.localhost:8081';
const B = 'http://b.localhost:8082';
const KB = 1024;
const T0 = 1_700_000_000_000;

type Policy = ReturnType<typeof createWebppPolicy>;

/** `count` served requests on `server` at a steady first byte and link rate (bodies of 64 KB), one every 50 ms from `fromMs`. */
function teach(policy: Policy, server: string, ttfbMs: number, bytesPerMs: number, count: number, fromMs = T0): number {
  let nowMs = fromMs;
  for (let i = 0; i < count; i++) {
    const bodyBytes = 64 * KB;
    const bodyMs = bodyBytes / bytesPerMs;
    nowMs += 50;
    policy.observe({ server, purpose: 'request', outcome: 'served', nowMs: nowMs + ttfbMs + bodyMs, ttfbMs, bodyBytes, bodyMs });
  }
  return nowMs + 1_000;
}

/** A: a fast first byte on a thin link; B: slower first byte, fat link. */
function thinAndFat(): { policy: Policy; nowMs: number } {
  const policy = createWebppPolicy({ random: seededRandom(1), now: () => T0 });
  teach(policy, A, 10, 1_000, 12); // 10 ms, 1 MB/s
  const nowMs = teach(policy, B, 60, 10_000, 12, T0); // 60 ms, 10 MB/s
  return { policy, nowMs };
}

describe('unknown sizes (size-estimate.ts)', () => {
  it('estimates from the same path under another query, then the type shrunk toward the site', () => {
    const sizes = new SizeEstimates();
    expect(sizes.estimate('/a.js')).toBeUndefined();
    sizes.learn('/app.js?v=1', 300 * KB);
    expect(sizes.estimate('/app.js?v=2')).toBe(300 * KB);
    sizes.learn('/img/a.jpg', 400 * KB);
    sizes.learn('/img/b.jpg', 600 * KB);
    sizes.learn('/style.css', 10 * KB);
    sizes.learn('/font.css', 20 * KB);
    const siteMean = (300 + 400 + 600 + 10 + 20) * KB / 5;
    // Two jpgs (mean 500 KB), shrunk toward the site's mean with a prior weight of 1.
    expect(sizes.estimate('/img/new.jpg')).toBeCloseTo((1000 * KB + siteMean) / 3, 6);
    expect(sizes.estimate('/new.css')).toBeLessThan(sizes.estimate('/img/new.jpg')! / 3);
    expect(sizes.estimate('/unknown.woff2')).toBeCloseTo(siteMean, 6);
    expect(sizes.estimate('/img/a.jpg')).toBe(400 * KB); // known exactly
  });

  it('ranks a never-fetched large image by its estimated size: the fat link, not the fast first byte', () => {
    const { policy, nowMs } = thinAndFat();
    // The site's images are large (learnt from bindings or earlier bodies).
    for (let i = 0; i < 4; i++) policy.learnSize(`/img/photo-${i}.jpg`, 800 * KB);
    const plan = policy.plan({ logicalUrl: '/img/photo-new.jpg?cb=123', method: 'GET', candidates: [A, B], nowMs });
    expect(plan[0]?.server).toBe(B);
    // A small file of a small type still goes to the fast first byte.
    for (let i = 0; i < 20; i++) policy.learnSize(`/css/s-${i}.css`, 1 * KB);
    expect(policy.plan({ logicalUrl: '/css/new.css', method: 'GET', candidates: [A, B], nowMs })[0]?.server).toBe(A);
  });
});

describe('bursts: the client\'s own queue (queue-ahead.ts)', () => {
  it('spreads a burst when the queue on the best server makes another finish sooner, and lengthens the timeout by the wait', () => {
    const policy = createWebppPolicy({ random: seededRandom(1), now: () => T0 });
    let nowMs = teach(policy, A, 20, 4_000, 12); // 20 ms, 4 MB/s
    nowMs = teach(policy, B, 60, 2_000, 12, T0); // 60 ms, 2 MB/s
    const alone = policy.plan({ logicalUrl: '/x.bin', method: 'GET', candidates: [A, B], sizeBytes: 200 * KB, nowMs });
    expect(alone[0]?.server).toBe(A);
    const inFlight: InFlightExchange[] = Array.from({ length: 12 }, () => ({ server: A, sizeBytes: 200 * KB, sentAtMs: nowMs - 1 }));
    const queued = policy.plan({ logicalUrl: '/y.bin', method: 'GET', candidates: [A, B], sizeBytes: 200 * KB, nowMs, inFlight });
    expect(queued[0]?.server).toBe(B);
    const timeoutOnA = (plan: typeof alone) => plan.find((attempt) => attempt.server === A)!.timeoutMs;
    // 12 bodies of 200 KB ahead at 4 MB/s: about 0.6 s more before A's head can come.
    expect(timeoutOnA(queued) - timeoutOnA(alone)).toBeGreaterThan(600);
  });

  it('a timeout behind six of the client\'s own exchanges to a server does not eject it', () => {
    const policy = createWebppPolicy({ random: seededRandom(1), now: () => T0 });
    const nowMs = teach(policy, A, 20, 2_000, 12);
    policy.observe({ server: A, purpose: 'request', outcome: 'timeout', nowMs, queuedAhead: 6 });
    expect(policy.describe(nowMs).find((view) => view.server === A)?.state).toBe('available');
    // Without a queue, and with no answer from A for seconds: a failure; the second in a row ejects.
    policy.observe({ server: A, purpose: 'request', outcome: 'timeout', nowMs: nowMs + 10_000 });
    expect(policy.describe(nowMs).find((view) => view.server === A)?.state).toBe('available');
    policy.observe({ server: A, purpose: 'request', outcome: 'timeout', nowMs: nowMs + 10_001 });
    expect(policy.describe(nowMs).find((view) => view.server === A)?.state).toBe('failed');
  });
});

describe('deciding again at the response head (head-redecision.ts)', () => {
  it('starts a fetch elsewhere when the rest of a large body here takes more than twice a whole fetch there', () => {
    const { policy, nowMs } = thinAndFat();
    for (let i = 0; i < 200; i++) policy.plan({ logicalUrl: `/r${i}`, method: 'GET', candidates: [A, B], sizeBytes: 1_000, nowMs }); // earn budget
    const big = policy.reconsiderAtHead({ server: A, ttfbMs: 10, contentLengthBytes: 2_000 * KB, alternatives: [B], nowMs });
    expect(big).toMatchObject({ server: B });
    expect(big!.restHereMs).toBeGreaterThan(2 * big!.elsewhereMs);
    // A small body is not worth a second transfer.
    expect(policy.reconsiderAtHead({ server: A, ttfbMs: 10, contentLengthBytes: 2 * KB, alternatives: [B], nowMs })).toBeUndefined();
  });

  it('is paid from the extra budget: beyond its tokens and the debt a failover may run, it starts nothing', () => {
    const { policy, nowMs } = thinAndFat();
    const answers = Array.from({ length: 20 }, () => policy.reconsiderAtHead({ server: A, ttfbMs: 10, contentLengthBytes: 2_000 * KB, alternatives: [B], nowMs }));
    expect(answers.filter((answer) => answer !== undefined).length).toBeLessThanOrEqual(policy.options.extraBudgetFloorTokens + policy.options.bucketCapacityTokens);
  });
});

describe('rent or buy: a body whose pace is not known, or runs late (head-redecision.ts)', () => {
  /** C: first byte measured (10 ms) but no body ended there yet; B: 60 ms, 10 MB/s. */
  function unknownPace(): { policy: Policy; nowMs: number } {
    const policy = createWebppPolicy({ random: seededRandom(1), now: () => T0 });
    const nowMs = teach(policy, B, 60, 10_000, 12);
    policy.observe({ server: A, purpose: 'request', outcome: 'served', nowMs, ttfbMs: 10 });
    for (let i = 0; i < 200; i++) policy.plan({ logicalUrl: `/r${i}`, method: 'GET', candidates: [A, B], sizeBytes: 1_000, nowMs }); // earn budget
    return { policy, nowMs };
  }

  it('waits until the body has taken a whole fetch elsewhere, then starts that fetch', () => {
    const { policy, nowMs } = unknownPace();
    const facts = { server: A, ttfbMs: 10, contentLengthBytes: 1_000 * KB, alternatives: [B], nowMs, deferrable: true };
    // At the head: nothing to compare A's rest with, so wait for as long as a whole fetch from B takes (60 ms + 100 ms).
    const atHead = policy.reconsiderAtHead({ ...facts, bodyElapsedMs: 0 });
    expect(atHead?.startAfterMs).toBeGreaterThan(150);
    expect(atHead!.startAfterMs).toBeLessThan(170);
    // Asked again once the body has run that long: start the fetch from B now.
    const later = policy.reconsiderAtHead({ ...facts, nowMs: nowMs + atHead!.startAfterMs!, bodyElapsedMs: atHead!.startAfterMs! });
    expect(later).toMatchObject({ server: B });
    expect(later?.startAfterMs ?? 0).toBe(0);
  });

  it('with no alternative priced yet, a long body here is looked at again after its time so far (doubling), not after its predicted rest', () => {
    const policy = createWebppPolicy({ random: seededRandom(1), now: () => T0 });
    // A: a measured crawl (10 kB/s); B: first bytes only (HEAD refreshes), and no link measured anywhere but A's to price it by.
    let nowMs = teach(policy, A, 20, 10, 12);
    for (let i = 0; i < 6; i++) policy.observe({ server: B, purpose: 'refresh', outcome: 'served', nowMs: (nowMs += 10), ttfbMs: 30 });
    // 4 MB at 10 kB/s: a predicted rest of about 400 s here.
    const facts = { server: A, ttfbMs: 20, contentLengthBytes: 4_000 * KB, alternatives: [B], nowMs, deferrable: true };
    const atHead = policy.reconsiderAtHead({ ...facts, bodyElapsedMs: 0 });
    expect(atHead?.server).toBe(A);
    expect(atHead?.startAfterMs).toBe(50);
    // Asked again after 800 ms: again after the time so far, so B, priced meanwhile, can take the rest within about twice the time so far.
    const later = policy.reconsiderAtHead({ ...facts, nowMs: nowMs + 800, bodyElapsedMs: 800 });
    expect(later?.startAfterMs).toBe(800);
  });

  it('a driver that cannot wait gets only decisions to start now (the worker\'s behaviour is unchanged)', () => {
    const { policy, nowMs } = unknownPace();
    expect(policy.reconsiderAtHead({ server: A, ttfbMs: 10, contentLengthBytes: 1_000 * KB, alternatives: [B], nowMs })).toBeUndefined();
  });

  it('a body running past what its measured pace predicted is treated as a pace not known', () => {
    const { policy, nowMs } = thinAndFat();
    for (let i = 0; i < 200; i++) policy.plan({ logicalUrl: `/r${i}`, method: 'GET', candidates: [A, B], sizeBytes: 1_000, nowMs });
    // 100 KB at A's 1 MB/s: about 100 ms, not worth a second transfer at the head…
    const facts = { server: A, ttfbMs: 10, contentLengthBytes: 100 * KB, alternatives: [B], nowMs, deferrable: true };
    const atHead = policy.reconsiderAtHead(facts);
    expect(atHead?.server).toBe(B);
    expect(atHead!.startAfterMs).toBeGreaterThan(90);
    // …but still running after 400 ms: its link slowed; B (about 70 ms for the whole) takes over.
    const late = policy.reconsiderAtHead({ ...facts, nowMs: nowMs + 400, bodyElapsedMs: 400 });
    expect(late?.server).toBe(B);
    expect(late?.startAfterMs ?? 0).toBe(0);
  });
});

describe('a body crawling on a live replica finishes elsewhere (issue 22: 0 failed requests)', () => {
  /** A: 20 ms, 2 MB/s, timed on 16 KB bodies; B: first bytes only (bodies too small to time its link). Nothing large ended yet. */
  function paceOfBUnknown(): { policy: Policy; nowMs: number } {
    const policy = createWebppPolicy({ random: seededRandom(1), now: () => T0 });
    let nowMs = T0;
    for (let i = 0; i < 12; i++) policy.observe({ server: A, purpose: 'request', outcome: 'served', nowMs: (nowMs += 50), ttfbMs: 20, bodyBytes: 16 * KB, bodyMs: 8 });
    for (let i = 0; i < 4; i++) policy.observe({ server: B, purpose: 'request', outcome: 'served', nowMs: (nowMs += 50), ttfbMs: 30, bodyBytes: 4 * KB, bodyMs: 2 });
    return { policy, nowMs };
  }

  it('a large Content-Length at the head has the next maintenance measure the pace of a replica only first bytes were measured on', () => {
    const { policy, nowMs } = paceOfBUnknown();
    // The first page's sizes were unknown and estimated small: no plan said "large".
    policy.reconsiderAtHead({ server: A, ttfbMs: 20, contentLengthBytes: 3_000 * KB, alternatives: [B], nowMs, deferrable: true, bodyElapsedMs: 0 });
    const due = policy.maintenance({ candidates: [A, B], inFlight: new Set(), nowMs });
    expect(due).toContainEqual(expect.objectContaining({ server: B, purpose: 'refresh', method: 'range' }));
  });

  it('a driver that cannot count the body\'s bytes, with the budget\'s debt at its limit, buys the fetch elsewhere once the body has run for its doubled price', () => {
    const policy = createWebppPolicy({ random: seededRandom(1), now: () => T0 });
    teach(policy, A, 20, 2_000, 12);
    const nowMs = teach(policy, B, 20, 2_000, 12, T0);
    // A 4 MB body on A whose link fell to a crawl after the head: past its predicted 2 s, it is late; B takes ~2 s for the whole.
    const facts = { server: A, ttfbMs: 20, contentLengthBytes: 4_000 * KB, alternatives: [B], nowMs: nowMs + 3_000, deferrable: true, bodyElapsedMs: 3_000 };
    // Spend the budget down to its debt limit (tokens in hand, then the debt a failover may run).
    const answers = Array.from({ length: 20 }, () => policy.reconsiderAtHead(facts));
    expect(answers.at(-1)?.startAfterMs).toBeGreaterThan(0);
    // Still running after 10 minutes: the rent paid is far beyond the doubled price of buying (2 · 2^4 × ~2 s): buy now.
    const late = policy.reconsiderAtHead({ ...facts, nowMs: nowMs + 600_000, bodyElapsedMs: 600_000 });
    expect(late).toMatchObject({ server: B });
    expect(late?.startAfterMs ?? 0).toBe(0);
  });
});

describe('while the body streams: its own pace (head-redecision.ts, HeadFacts.bodyBytesSoFar)', () => {
  /** A and B alike: 20 ms and 2 MB/s each (a 4 MB body takes about 2 s on either). */
  function twins(): { policy: Policy; nowMs: number } {
    const policy = createWebppPolicy({ random: seededRandom(1), now: () => T0 });
    teach(policy, A, 20, 2_000, 12);
    const nowMs = teach(policy, B, 20, 2_000, 12, T0);
    for (let i = 0; i < 200; i++) policy.plan({ logicalUrl: `/r${i}`, method: 'GET', candidates: [A, B], sizeBytes: 1_000, nowMs }); // earn budget
    return { policy, nowMs };
  }
  const MB4 = 4_000 * KB;

  it('a body whose link collapses after the head is re-decided at the next look, and only its rest is fetched elsewhere', () => {
    const { policy, nowMs } = twins();
    const facts = { server: A, ttfbMs: 20, contentLengthBytes: MB4, alternatives: [B], nowMs, deferrable: true };
    // At the head: on time (about 2 s here, as long as elsewhere), so nothing starts…
    const atHead = policy.reconsiderAtHead({ ...facts, bodyElapsedMs: 0, bodyBytesSoFar: 0 });
    expect(atHead?.startAfterMs).toBeGreaterThan(0);
    // …and a driver that counts bytes is asked again soon, not at the body's predicted end.
    expect(atHead!.startAfterMs).toBeLessThanOrEqual(50);
    // Without the byte count (the old driver), the moment below still looks on time: no start.
    const blind = policy.reconsiderAtHead({ ...facts, nowMs: nowMs + 400, bodyElapsedMs: 400 });
    expect(blind?.startAfterMs ?? 0).toBeGreaterThan(0);
    // At 400 ms only 110 KB came (the link fell to 20 kB/s after 50 ms): at this pace the rest
    // takes about 14 s here, against about 2 s for the rest from B.
    const late = policy.reconsiderAtHead({ ...facts, nowMs: nowMs + 400, bodyElapsedMs: 400, bodyBytesSoFar: 110 * KB });
    expect(late).toMatchObject({ server: B });
    expect(late?.startAfterMs ?? 0).toBe(0);
    expect(late!.restHereMs).toBeGreaterThan(10_000);
    // Elsewhere is the rest's time (the bytes not received yet), not the whole body's.
    expect(late!.elsewhereMs).toBeLessThan(20 + MB4 / 2_000);
  });

  it('a body that keeps its pace starts nothing, and is looked at within one fetch elsewhere', () => {
    const { policy, nowMs } = twins();
    const facts = { server: A, ttfbMs: 20, contentLengthBytes: MB4, alternatives: [B], nowMs, deferrable: true };
    const onPace = policy.reconsiderAtHead({ ...facts, nowMs: nowMs + 800, bodyElapsedMs: 800, bodyBytesSoFar: 1_600 * KB });
    expect(onPace?.startAfterMs).toBeGreaterThan(0);
    expect(onPace!.startAfterMs).toBeLessThanOrEqual(onPace!.elsewhereMs);
    // All of it received: nothing to decide.
    expect(policy.reconsiderAtHead({ ...facts, nowMs: nowMs + 2_000, bodyElapsedMs: 2_000, bodyBytesSoFar: MB4 })).toBeUndefined();
  });

  it('a body stalled after its first bytes is re-decided within about one fetch elsewhere', () => {
    const { policy, nowMs } = twins();
    const facts = { server: A, ttfbMs: 20, contentLengthBytes: 400 * KB, alternatives: [B], nowMs, deferrable: true };
    // 300 KB in the first 150 ms, then nothing: at 400 ms the pace predicts another ~130 ms…
    const early = policy.reconsiderAtHead({ ...facts, nowMs: nowMs + 400, bodyElapsedMs: 400, bodyBytesSoFar: 300 * KB });
    expect(early?.startAfterMs ?? 0).toBeGreaterThan(0);
    // …still nothing by 800 ms: the rest here (~270 ms at the pace so far) is beyond twice the rest from B (~70 ms).
    const stalled = policy.reconsiderAtHead({ ...facts, nowMs: nowMs + 800, bodyElapsedMs: 800, bodyBytesSoFar: 300 * KB });
    expect(stalled).toMatchObject({ server: B });
    expect(stalled?.startAfterMs ?? 0).toBe(0);
  });

  it('while every alternative is ejected, the body is looked at again within one probe interval', () => {
    const { policy, nowMs } = twins();
    policy.observe({ server: B, purpose: 'request', outcome: 'network-error', nowMs });
    expect(policy.describe(nowMs).find((view) => view.server === B)?.state).toBe('failed');
    const facts = { server: A, ttfbMs: 20, contentLengthBytes: MB4, alternatives: [B], nowMs, deferrable: true };
    const look = policy.reconsiderAtHead({ ...facts, nowMs: nowMs + 6_000, bodyElapsedMs: 6_000, bodyBytesSoFar: 200 * KB });
    expect(look?.startAfterMs).toBeLessThanOrEqual(policy.options.probeBackoffBaseMs);
  });

  it('a body its own bytes prove slow is moved whatever the debt (a replacement, charged); a whole copy at the debt limit waits for its doubled price', () => {
    const policy = createWebppPolicy({ random: seededRandom(1), now: () => T0 });
    teach(policy, A, 20, 200, 12); // A's link: 200 kB/s
    const nowMs = teach(policy, B, 20, 2_000, 12, T0);
    // 110 KB in 400 ms: the rest takes about 14 s here at this pace, about 7 × the rest from B.
    const facts = { server: A, ttfbMs: 20, contentLengthBytes: MB4, alternatives: [B], nowMs: nowMs + 400, deferrable: true, bodyElapsedMs: 400, bodyBytesSoFar: 110 * KB };
    const answers = Array.from({ length: 20 }, () => policy.reconsiderAtHead(facts));
    // The driver fetches only the rest and drops the first body when it answers: a move, not a
    // copy. Past the floor's tokens and the debt's limit (6 here) it is still made: refused, such
    // bodies crawled for seconds beside a healthy replica in the chaos bench.
    expect(answers.every((answer) => answer?.server === B && (answer.startAfterMs ?? 0) === 0)).toBe(true);
    // The budget is at its limit now: a driver that cannot count bytes (it races a whole copy)
    // is told to look again at the head, and after 4 s of rent still (its price: 2 · 2^4 × elsewhere).
    const copy = { server: A, ttfbMs: 20, contentLengthBytes: MB4, alternatives: [B], nowMs: nowMs + 400, deferrable: true };
    expect(policy.reconsiderAtHead({ ...copy, bodyElapsedMs: 0 })?.startAfterMs).toBeGreaterThan(0);
    expect(policy.reconsiderAtHead({ ...copy, bodyElapsedMs: 4_000 })?.startAfterMs).toBeGreaterThan(0);
  });

  it('probes refused by a dead replica cost the budget nothing: a crawling body is still finished elsewhere (the chaos bench)', () => {
    const policy = createWebppPolicy({ random: seededRandom(1), now: () => T0 });
    const C = 'http://c.localhost:8083';
    teach(policy, A, 20, 2_000, 12);
    let nowMs = teach(policy, B, 20, 2_000, 12, T0);
    // C dies (a refused connection ejects it) and stays dead: its probes are refused, one per backoff.
    policy.observe({ server: C, purpose: 'request', outcome: 'network-error', nowMs });
    let probes = 0;
    for (let round = 0; round < 40; round++) {
      nowMs += 2_000;
      // A request of the page meanwhile, earning its share (0.05 token): 2 tokens in all.
      policy.plan({ logicalUrl: `/r${round}`, method: 'GET', candidates: [A, B, C], sizeBytes: 1_000, nowMs });
      for (const due of policy.maintenance({ candidates: [], inFlight: new Set(), nowMs })) {
        if (due.purpose !== 'probe' || due.server !== C) continue;
        probes++;
        policy.observe({ server: C, purpose: 'probe', outcome: 'network-error', nowMs: nowMs + 1 });
      }
    }
    expect(probes).toBeGreaterThan(10);
    // A body on A then crawls: its rest takes about 7 × a fetch of the rest from B. Charged at
    // the send, the refused probes had left the budget at its debt limit, where the fetch
    // elsewhere must save 32 × its cost, and this body was left to crawl.
    const facts = { server: A, ttfbMs: 20, contentLengthBytes: MB4, alternatives: [B, C], nowMs: nowMs + 400, deferrable: true, bodyElapsedMs: 400, bodyBytesSoFar: 110 * KB };
    const decision = policy.reconsiderAtHead(facts);
    expect(decision).toMatchObject({ server: B });
    expect(decision?.startAfterMs ?? 0).toBe(0);
  });

  it('a probe the server answers is paid from the budget', () => {
    const policy = createWebppPolicy({ random: seededRandom(1), now: () => T0 });
    const C = 'http://c.localhost:8083';
    teach(policy, A, 20, 200, 12); // A's link: 200 kB/s
    let nowMs = teach(policy, B, 20, 2_000, 12, T0);
    // At the head, A's measured pace predicts about 20 s for the body, B about 2 s: a whole copy from B is worth it.
    const facts = { server: A, ttfbMs: 20, contentLengthBytes: MB4, alternatives: [B], deferrable: true, bodyElapsedMs: 0 };
    /** Copies elsewhere the budget admits now (the floor's tokens, then the debt: no request earns meanwhile). */
    const admitted = (atMs: number): number => Array.from({ length: 20 }, () => policy.reconsiderAtHead({ ...facts, nowMs: atMs })).filter((answer) => answer !== undefined && (answer.startAfterMs ?? 0) === 0).length;
    policy.observe({ server: C, purpose: 'request', outcome: 'network-error', nowMs });
    // C comes back: its first probe is answered.
    let answered = 0;
    for (let round = 0; round < 10 && answered === 0; round++) {
      nowMs += 2_000;
      for (const due of policy.maintenance({ candidates: [], inFlight: new Set(), nowMs })) {
        if (due.purpose !== 'probe' || due.server !== C) continue;
        answered++;
        policy.observe({ server: C, purpose: 'probe', outcome: 'served', nowMs: nowMs + 30, ttfbMs: 30, status: 200 });
      }
    }
    expect(answered).toBe(1);
    expect(admitted(nowMs + 400)).toBe(policy.options.extraBudgetFloorTokens + policy.options.bucketCapacityTokens - 1);
  });

  it('an alternative whose link was never measured is priced at the harmonic mean of the measured links', () => {
    const policy = createWebppPolicy({ random: seededRandom(1), now: () => T0 });
    const C = 'http://c.localhost:8083';
    teach(policy, A, 20, 2_000, 12);
    let nowMs = teach(policy, B, 20, 2_000, 12, T0);
    // C: first bytes only (HEAD refreshes), no body measured.
    for (let i = 0; i < 6; i++) policy.observe({ server: C, purpose: 'refresh', outcome: 'served', nowMs: (nowMs += 10), ttfbMs: 30 });
    policy.observe({ server: B, purpose: 'request', outcome: 'network-error', nowMs });
    for (let i = 0; i < 200; i++) policy.plan({ logicalUrl: `/r${i}`, method: 'GET', candidates: [A, B, C], sizeBytes: 1_000, nowMs }); // earn budget
    const facts = { server: A, ttfbMs: 20, contentLengthBytes: MB4, alternatives: [B, C], nowMs: nowMs + 400, deferrable: true, bodyElapsedMs: 400, bodyBytesSoFar: 110 * KB };
    expect(policy.reconsiderAtHead(facts)).toMatchObject({ server: C });
  });
});

describe('a body finished elsewhere teaches its server\'s pace (policy.ts, reconsiderAtHead)', () => {
  /** A: 20 ms, 2 MB/s; B: 20 ms, 1 MB/s. A 4 MB body: about 2 s on A, 4 s on B. */
  function fastAndSlower(): { policy: Policy; nowMs: number } {
    const policy = createWebppPolicy({ random: seededRandom(1), now: () => T0 });
    teach(policy, A, 20, 2_000, 12);
    const nowMs = teach(policy, B, 20, 1_000, 12, T0);
    for (let i = 0; i < 200; i++) policy.plan({ logicalUrl: `/r${i}`, method: 'GET', candidates: [A, B], sizeBytes: 1_000, nowMs }); // earn budget
    return { policy, nowMs };
  }
  const MB4 = 4_000 * KB;
  const rateOf = (policy: Policy, server: string, nowMs: number): number | undefined => policy.describe(nowMs).find((view) => view.server === server)?.throughputBytesPerMs;

  it('a driver that cannot count bytes: a body bought away after 20 s ran at most L / 20 s, and the next large body goes elsewhere', () => {
    const { policy, nowMs } = fastAndSlower();
    expect(policy.plan({ logicalUrl: '/big-0', method: 'GET', candidates: [A, B], sizeBytes: MB4, nowMs })[0]?.server).toBe(A);
    // The body on A, predicted to take 2 s, still runs after 20 s (A's link fell to a crawl after the head): B takes it over.
    const late = policy.reconsiderAtHead({ server: A, ttfbMs: 20, contentLengthBytes: MB4, alternatives: [B], nowMs: nowMs + 20_000, deferrable: true, bodyElapsedMs: 20_000 });
    expect(late).toMatchObject({ server: B });
    expect(late?.startAfterMs ?? 0).toBe(0);
    // It never ends on A (the fetch from B wins, and it is cancelled): A is at most 4 MB / 20 s ≈ 205 B/ms
    // (entered at no less than a quarter of its estimate: one body cannot tell a slower link from a stall).
    const afterMs = nowMs + 24_000;
    expect(rateOf(policy, A, afterMs)).toBeLessThan(1_000);
    expect(policy.plan({ logicalUrl: '/big-1', method: 'GET', candidates: [A, B], sizeBytes: MB4, nowMs: afterMs })[0]?.server).toBe(B);
  });

  it('a driver that counts bytes: the pace so far of a body bought away is a sample of its link', () => {
    const { policy, nowMs } = fastAndSlower();
    // 200 KB in 1 s after the head: 200 B/ms, against 2 MB/s measured before.
    const late = policy.reconsiderAtHead({ server: A, ttfbMs: 20, contentLengthBytes: MB4, alternatives: [B], nowMs: nowMs + 1_000, deferrable: true, bodyElapsedMs: 1_000, bodyBytesSoFar: 200 * KB });
    expect(late).toMatchObject({ server: B });
    expect(late?.startAfterMs ?? 0).toBe(0);
    expect(rateOf(policy, A, nowMs + 2_000)).toBeLessThan(1_000);
    expect(policy.plan({ logicalUrl: '/big-1', method: 'GET', candidates: [A, B], sizeBytes: MB4, nowMs: nowMs + 2_000 })[0]?.server).toBe(B);
  });

  it('a small body bought away after a stall does not sink a fast link: at most a factor of four per such body', () => {
    const policy = createWebppPolicy({ random: seededRandom(1), now: () => T0 });
    teach(policy, A, 20, 10_000, 12); // 10 MB/s
    let nowMs = teach(policy, B, 60, 1_000, 12, T0); // 1 MB/s
    for (let i = 0; i < 200; i++) policy.plan({ logicalUrl: `/r${i}`, method: 'GET', candidates: [A, B], sizeBytes: 1_000, nowMs }); // earn budget
    // 36 KB on A, about 4 ms of link, still not there 250 ms after the head (a stall): B takes it over.
    nowMs += 250;
    const late = policy.reconsiderAtHead({ server: A, ttfbMs: 20, contentLengthBytes: 36 * KB, alternatives: [B], nowMs, deferrable: true, bodyElapsedMs: 250 });
    expect(late).toMatchObject({ server: B });
    expect(late?.startAfterMs ?? 0).toBe(0);
    expect(rateOf(policy, A, nowMs)).toBeGreaterThan(10_000 / 4);
    expect(policy.plan({ logicalUrl: '/big', method: 'GET', candidates: [A, B], sizeBytes: MB4, nowMs })[0]?.server).toBe(A);
  });

  it('a body only looked at again (on time, or not yet bought) teaches nothing: it will end and be measured whole', () => {
    const { policy, nowMs } = fastAndSlower();
    const look = policy.reconsiderAtHead({ server: A, ttfbMs: 20, contentLengthBytes: MB4, alternatives: [B], nowMs: nowMs + 1_000, deferrable: true, bodyElapsedMs: 1_000 });
    expect(look?.startAfterMs).toBeGreaterThan(0);
    expect(rateOf(policy, A, nowMs + 1_000)).toBeCloseTo(2_000, 0);
  });
});

describe('brownouts and recovery (brownout.ts, backoff cap)', () => {
  it('a replica with occasional quick 5xx stays in use, ranked by what its errors cost; five in a row eject it', () => {
    const policy = createWebppPolicy({ random: seededRandom(1), now: () => T0 });
    teach(policy, A, 20, 2_000, 12);
    let nowMs = teach(policy, B, 22, 2_000, 12, T0);
    // One 5xx in two on A, after a good record.
    for (let i = 0; i < 8; i++) {
      nowMs += 10;
      if (i % 2 === 0) policy.observe({ server: A, purpose: 'request', outcome: 'server-error', nowMs, status: 503, ttfbMs: 2 });
      else policy.observe({ server: A, purpose: 'request', outcome: 'served', nowMs, ttfbMs: 20 });
    }
    expect(policy.describe(nowMs).find((view) => view.server === A)?.state).toBe('available');
    // 20 ms / (1 − ~0.26, its decayed 5xx share) ranks behind B's 22 ms.
    expect(policy.plan({ logicalUrl: '/x', method: 'GET', candidates: [A, B], sizeBytes: 1_000, nowMs })[0]?.server).toBe(B);
    // A long healthy record: four 5xx in a row are tolerated, the fifth ejects (Envoy's consecutive_5xx).
    const healthy = createWebppPolicy({ random: seededRandom(1), now: () => T0 });
    nowMs = teach(healthy, A, 20, 2_000, 40);
    for (let i = 0; i < 4; i++) healthy.observe({ server: A, purpose: 'request', outcome: 'server-error', nowMs: nowMs + i, status: 503 });
    expect(healthy.describe(nowMs).find((view) => view.server === A)?.state).toBe('available');
    healthy.observe({ server: A, purpose: 'request', outcome: 'server-error', nowMs: nowMs + 5, status: 503 });
    expect(healthy.describe(nowMs).find((view) => view.server === A)?.state).toBe('failed');
  });

  it('probes a long-dead server every 2–4 s, so its return is seen within seconds', () => {
    let nowMs = T0;
    const policy = createWebppPolicy({ random: seededRandom(5), now: () => nowMs });
    policy.observe({ server: A, purpose: 'request', outcome: 'network-error', nowMs });
    const probeTimes: number[] = [];
    while (nowMs < T0 + 120_000) {
      nowMs = policy.nextMaintenanceAtMs(nowMs) as number;
      const due = policy.maintenance({ candidates: [], inFlight: new Set(), nowMs });
      if (due.length === 0) continue;
      probeTimes.push(nowMs);
      policy.observe({ server: A, purpose: 'probe', outcome: 'network-error', nowMs });
    }
    const gaps = probeTimes.slice(1).map((atMs, i) => atMs - probeTimes[i]!);
    expect(Math.max(...gaps)).toBeLessThanOrEqual(4_000);
  });
});

describe('every replica down: retry rounds (policy.ts, retryAfterMs)', () => {
  it('asks for the plan again after the probes\' backoff, and not once the request is older than retryWindowMs', () => {
    const policy = createWebppPolicy({ random: seededRandom(3), now: () => T0 }, { retryWindowMs: 10_000 });
    const first = policy.retryAfterMs(0, 0) as number;
    expect(first).toBeGreaterThanOrEqual(1_000);
    expect(first).toBeLessThanOrEqual(2_000);
    const later = policy.retryAfterMs(3, 2_000) as number;
    expect(later).toBeGreaterThanOrEqual(2_000);
    expect(later).toBeLessThanOrEqual(4_000);
    // The retry would start after the window: the request fails now.
    expect(policy.retryAfterMs(5, 9_000)).toBeUndefined();
    // 0: the paper's behaviour, fail once every replica has failed.
    expect(createWebppPolicy({ random: seededRandom(3), now: () => T0 }, { retryWindowMs: 0 }).retryAfterMs(0, 0)).toBeUndefined();
  });

  it('does not hold a request for the window when every server of its plan was ejected longer than a window ago', () => {
    let nowMs = T0;
    const policy = createWebppPolicy({ random: seededRandom(3), now: () => nowMs }, { retryWindowMs: 10_000 });
    teach(policy, A, 10, 1_000, 5);
    teach(policy, B, 10, 1_000, 5);
    nowMs = T0 + 1_000;
    policy.observe({ server: A, purpose: 'request', outcome: 'network-error', nowMs });
    policy.observe({ server: B, purpose: 'request', outcome: 'network-error', nowMs });
    // Ejected just now: a restart or a flap may bring one back within the window.
    nowMs += 9_000;
    expect(policy.retryAfterMs(0, 0, [A, B])).toBeGreaterThanOrEqual(1_000);
    // Gone for longer than a window: their probes bring them back; the request fails now.
    nowMs += 2_000;
    expect(policy.retryAfterMs(0, 0, [A, B])).toBeUndefined();
    // A server of the plan that is not gone (never seen, or back) keeps the retry rounds.
    expect(policy.retryAfterMs(0, 0, [A, B, 'http://c.localhost:8083'])).toBeGreaterThanOrEqual(1_000);
    policy.observe({ server: B, purpose: 'probe', outcome: 'served', nowMs, ttfbMs: 10 });
    expect(policy.retryAfterMs(0, 0, [A, B])).toBeGreaterThanOrEqual(1_000);
  });
});

describe('the engine\'s in-flight ledger (in-flight.ts)', () => {
  it('shows a plan what is in flight, tells a sample how many were ahead, and forgets an exchange when it ends', () => {
    const sent: { exchange: Exchange; events: ExchangeEvents<string> }[] = [];
    const io: EngineIO<string> = { now: () => T0, setTimer: () => () => undefined, send: (exchange, events) => (sent.push({ exchange, events }), () => undefined) };
    const seen: (readonly InFlightExchange[] | undefined)[] = [];
    const queued: (number | undefined)[] = [];
    const policy = createWebppPolicy({ random: seededRandom(1), now: () => T0 });
    const spy = {
      ...policy,
      name: policy.name,
      plan: (input: Parameters<Policy['plan']>[0]) => (seen.push(input.inFlight), [{ server: A, timeoutMs: 10_000, reason: 'only' }]),
      observe: (sample: Parameters<Policy['observe']>[0]) => void queued.push(sample.queuedAhead),
      snapshot: () => undefined,
      restore: () => undefined,
      describe: () => [],
    };
    const engine = new ClientEngine({ policy: spy, io, backgroundTarget: () => undefined });
    for (let i = 0; i < 3; i++) engine.run(engine.plan({ logicalUrl: `/r${i}`, method: 'GET', candidates: [A], sizeBytes: 1_000 }, (s) => s), () => undefined);
    expect(seen.map((inFlight) => inFlight?.length ?? 0)).toEqual([0, 1, 2]);
    sent[2]!.events.error();
    expect(queued).toEqual([2]);
    sent[0]!.events.head({ status: 200, ttfbMs: 5, response: 'ok' });
    sent[0]!.events.bodyComplete({ bodyBytes: 1_000, bodyMs: 1 });
    expect(engine.inFlight.count(A)).toBe(1);
  });
});

describe('cold start (plan.ts: coldSpread, coldRace)', () => {
  const C = 'http://c.localhost:8083';

  it('races the very first request (size unknown) on three replicas, once', () => {
    const policy = createWebppPolicy({ random: seededRandom(1), now: () => T0 });
    const first = policy.plan({ logicalUrl: '/big.jpg', method: 'GET', candidates: [A, B, C], nowMs: T0 });
    expect(first.map((attempt) => attempt.hedgeAfterMs)).toEqual([undefined, 0, 0]);
    expect(policy.admitHedge(B, T0)).toBe(true);
    const second = policy.plan({ logicalUrl: '/big2.jpg', method: 'GET', candidates: [A, B, C], nowMs: T0 });
    expect(second.every((attempt) => attempt.hedgeAfterMs === undefined)).toBe(true);
  });

  it('spreads a burst planned before any answer over the replicas, shortest own queue first', () => {
    const policy = createWebppPolicy({ random: seededRandom(1), now: () => T0 });
    const inFlight: InFlightExchange[] = [];
    const firsts: string[] = [];
    for (let i = 0; i < 6; i++) {
      const plan = policy.plan({ logicalUrl: `/r${i}.css`, method: 'GET', candidates: [A, B, C], sizeBytes: 1_000, nowMs: T0, inFlight: [...inFlight] });
      firsts.push(plan[0]!.server);
      inFlight.push({ server: plan[0]!.server, sizeBytes: 1_000, sentAtMs: T0 });
    }
    expect(firsts).toEqual([A, B, C, A, B, C]);
  });
});
