/**
 * What is not yet measured, measured again (issue 22; docs/selection.md, "Doubt"): which
 * servers a refresh should go to because what is known of them is too little to rule them out.
 *
 * A server is ranked by its expected time, E[first byte] + L / rate (expected-time.ts). Two
 * parts of that can rest on almost nothing, and a server ranked low on almost nothing is never
 * tried again by a real request (the policy exploits its estimates):
 * - a pace never measured (only heads seen: a cold-start race, HEAD refreshes) is priced at the
 *   measured links' harmonic mean (plan.ts, score): a fat link among thin ones looks thin
 *   (training seed 10: the best replica, 6 MB/s, never used in 40 requests);
 * - a first byte measured a few times, long ago: one sample taken in a stall or during the
 *   client's own loaded start kept the best replica out for the rest of the visit (training
 *   seed 288; e2e sw-with-origin under load: b measured once at 1,960 ms, never again).
 *
 * Optimism in the face of uncertainty, as UCB does for a bandit (Auer, Cesa-Bianchi and
 * Fischer, "Finite-time Analysis of the Multiarmed Bandit Problem", Machine Learning 2002):
 * each server gets a lower bound of its expected time for the site's mean size L, and one whose
 * bound is below half the best server's expected time is measured: it may be the better one, by
 * more than the measurement costs. A measurement is about one request's work, and it pays when the
 * time it can save on the next request exceeds that: best − bound > bound, the price head-
 * redecision.ts and the hedges pay for an extra request (C3's load price, Suresh et al., NSDI 2015).
 * Without it 2 000 clients' measurements of near-equal replicas cost the herd more than a random
 * pick (herding.test.ts).
 * The measurement is a refresh (a ranged GET while large resources are in use, else a HEAD),
 * not a real request: exploring costs one extra request from the one budget, never a page's
 * request on a server that may be slow (Sparrow's probes, SOSP 2013: sample, then place work).
 * - an unknown pace bounds the body time below by 0 (an infinitely fat link): the server is
 *   measured once when its first byte alone beats the best's whole expected time, i.e. only
 *   when a large body makes its pace matter;
 * - a first byte from n < minSamplesForQuantile samples, the last taken `age` ago, is bounded by
 *   E · 2^(−age / (halfLife · n)): the doubt about a few samples grows as they age (their weight
 *   halves every half-life, as in the sketch) and more slowly the more samples there are. A
 *   server just measured is never doubted (its bound is its estimate); one measured once, ten
 *   times slower than the best, is measured again after log2(20) half-lives (below half the best).
 * So each server gets at most minSamplesForQuantile − 1 measurements for its first byte and one
 * for its pace, and each spends from the one extra budget (borrowing, as refreshes do).
 */
import type { MaintenanceInput } from '../../engine/policy-types.js';
import type { MaintenanceContext } from './maintenance.js';
import { bodyMsOf } from './expected-time.js';
import type { WebppOptions } from './options.js';
import { harmonicMeanRate, type ServerRecord } from './server-record.js';

/**
 * The servers of the request's candidates to measure now (each with its expected time and bound), most promising first: available, measured, not
 * the best, whose lower bound (above) is below half the best's expected time for the site's mean size.
 */
export function doubted({ candidates, nowMs }: MaintenanceInput, { records, options, meanSizeBytes: sizeBytes, largeResourcesInUse }: MaintenanceContext): [ServerRecord, number, number][] {
  const fallbackRate = harmonicMeanRate(candidates, records);
  // [record, its expected time, its lower bound (Infinity: not in doubt)]
  const scored: [ServerRecord, number, number][] = [];
  for (const server of candidates) {
    const record = records.get(server);
    if (!record?.measured || record.state === 'failed') continue;
    const rate = record.throughput.bytesPerMs();
    const ttfbMs = record.ttfb.meanMs();
    // Fewer than minSamplesForQuantile samples (it is measured: its sketch is not empty).
    const few = record.empty(options);
    const doubt = (few || (rate === undefined && largeResourcesInUse && !record.throughputBootstrapSent)) && !measuring(record, nowMs, options);
    const expectedMs = ttfbMs + bodyMsOf(sizeBytes, rate ?? fallbackRate);
    // The first byte's bound: E · 2^(−age / (halfLife · n)) from few samples, else the estimate;
    // the body's bound: 0 for a pace never measured (bodyMsOf of undefined).
    const ttfbBoundMs = few ? ttfbMs * 2 ** (-(nowMs - record.lastSampleAtMs) / (options.estimateHalfLifeMs * record.sampleCount)) : ttfbMs;
    const boundMs = doubt ? ttfbBoundMs + bodyMsOf(sizeBytes, rate) : Infinity;
    scored.push([record, expectedMs, boundMs]);
  }
  const bestMs = Math.min(...scored.map((entry) => entry[1]));
  return scored
    .filter((entry) => 2 * entry[2] < bestMs && entry[1] > bestMs)
    .sort((a, b) => a[2] - b[2]);
}

/**
 * A request planned to the server first, still within its timeout, measures it already. Not past
 * that timeout (a server measured less than twice has the initial one): it was answered elsewhere
 * first (a cold-start race another replica won, its attempt there cancelled) and measured nothing;
 * on a short visit such a replica was otherwise never measured (issue 22, training seeds 227 and 290).
 */
export function measuring(record: ServerRecord, nowMs: number, options: WebppOptions): boolean {
  return record.requestedAtMs > record.lastSampleAtMs && nowMs - record.requestedAtMs < options.initialTimeoutMs;
}
