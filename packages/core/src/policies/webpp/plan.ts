/**
 * The attempts of one request, best first (route → PLAN → attempt → serve → learn):
 * 1. Cold start: no candidate measured yet → the origin's order (the binding order), not a
 *    random pick; the first page's requests and one free refresh per server teach the rest.
 * 2. Measured, available servers by expected time (expected-time.ts), each scored with the
 *    hedge it would get when the hedge budget has a token: min(E[T], E[T hedged]).
 *    A server not measured for a while is ranked with optimism (see agedExpectedMs).
 * 3. The best one first; if hedging it by the next best lowers its expected time, that one
 *    second, with hedgeAfterMs chosen from the primary's own distribution (addHedges).
 * 4. Then the other measured servers, then never-measured ones (origin order), then ejected
 *    ones as a last resort (the worker fails open), the one probed soonest first.
 * Issue 13 (Fei et al.): a server not heard from lately is ranked by A × S when its pushed
 * S is fresh (pushed-load.ts); the first attempt is picked at random inside the
 * equivalent-server set (equivalent-set.ts) rather than always the single best; and the
 * never-measured servers follow seed.ts (the origin's order, refined by what it pushed).
 */
import type { PlanInput, PlannedAttempt } from '../../engine/policy-types.js';
import type { ServerId } from '../../types.js';
import { weightedQuantile, type WeightedSamples } from './latency-sketch.js';
import { bodyMsOf, expectedHedgedMs, expectedMs, hedgeFireShare } from './expected-time.js';
import type { WebppOptions } from './options.js';
import { harmonicMeanRate, timeoutMsOf, type ServerRecord } from './server-record.js';
import type { EquivalentSet, Estimated } from './equivalent-set.js';
import { keepDrawn, spreadWeights, type Spread, type SpreadState, type SpreadStates } from './load-spread.js';
import { preferredEquivalent } from './preferred.js';
import type { PushedLoads } from './pushed-load.js';
import { seedOrder, type Aggregates } from './seed.js';
import { connectionsFor, queueAhead } from './queue-ahead.js';

/** What push, the equivalent-server set and first-visit seeding add to planning (issue 13). */
export interface HerdContext {
  pushed: PushedLoads;
  aggregates: Aggregates;
  equivalentSet: EquivalentSet;
  random: () => number;
  /** Per set of replicas: the spill of its members' load, and the server the first attempts go to until the client draws again (load-spread.ts). */
  spreads: SpreadStates;
}

interface Scored {
  server: ServerId;
  record: ServerRecord;
  order: number;
  ttfb: WeightedSamples;
  bodyMs: number;
  expectedMs: number;
  /** With the hedge, when that lowers the expected time. */
  hedge?: { partner: Scored; delayMs: number; expectedMs: number };
}

export function planAttempts(
  input: PlanInput,
  records: ReadonlyMap<ServerId, ServerRecord>,
  options: WebppOptions,
  hedgeAffordable: boolean,
  herd: HerdContext,
  coldRaceAllowed = false,
): PlannedAttempt[] {
  const candidates = [...new Set(input.candidates)];
  const sizeBytes = input.method.toUpperCase() === 'HEAD' ? 0 : Math.max(0, input.sizeBytes ?? 0);
  const queueWaitMs = queueWaitOf(input, records, options, sizeBytes);
  const attempt = (server: ServerId, reason: string, extra: Partial<PlannedAttempt> = {}): PlannedAttempt => {
    const waitMs = queueWaitMs(server);
    return {
      server,
      timeoutMs: timeoutMsOf(records.get(server), options) + waitMs,
      deadlineMs: options.timeoutCeilingMs + waitMs,
      reason,
      ...extra,
    };
  };
  const failed = candidates.filter((server) => records.get(server)?.state === 'failed');
  const available = candidates.filter((server) => records.get(server)?.state !== 'failed');
  const measured = available.filter((server) => records.get(server)?.measured === true);
  const unmeasured = available.filter((server) => records.get(server)?.measured !== true);
  const lastResort = failed
    .sort((a, b) => (records.get(a)?.nextProbeAtMs ?? 0) - (records.get(b)?.nextProbeAtMs ?? 0))
    .map((server) => attempt(server, 'last-resort-failed'));
  const seeded = coldSpread(seedOrder(unmeasured, herd.pushed, herd.aggregates, input.nowMs, options), input.inFlight);
  if (measured.length === 0) {
    // Nothing measured: a preferred server (preferred.ts) is as good a first guess as the origin's order, and costs less.
    const preferredAt = seeded.findIndex((seed) => seed.server === input.preferred);
    if (preferredAt > 0) seeded.unshift(...seeded.splice(preferredAt, 1));
    const pushedKnown = seeded.some((seed) => herd.pushed.get(seed.server)?.serviceMs !== undefined);
    const race = coldRaceAllowed && !pushedKnown ? coldRace(seeded, input.inFlight, input.sizeBytes, options) : 0;
    return [
      ...seeded.map((seed, index) => attempt(seed.server, index > 0 && index < race ? 'cold-start-race' : seed.reason, index < race ? { measureHead: true, ...(index > 0 && { hedgeAfterMs: 0 }) } : {})),
      ...lastResort,
    ];
  }

  const { ranked, members, spread, state } = rank(measured, candidates, records, options, hedgeAffordable, herd, input, queueWaitMs);
  const picked = keepDrawn(spread, state, herd.random, options, ranked[0]?.server, state.spill.loaded);
  const drawn = ranked.find((scored) => scored.server === picked) as Scored;
  // A preferred server (the own origin of a navigation: its preload is on its way) where the policy predicts no gain elsewhere (preferred.ts).
  const preferred = preferredOf(input.preferred, ranked, members);
  const best = preferred ?? drawn;
  const rest = ranked.filter((scored) => scored !== best);
  const why = best === ranked[0] ? 'lowest-expected-time' : preferred === undefined ? 'equivalent-set' : 'preferred-equivalent';
  const attempts: PlannedAttempt[] = [attempt(best.server, best.hedge ? `${why}-hedged` : why)];
  if (best.hedge) attempts.push(attempt(best.hedge.partner.server, 'hedge', { hedgeAfterMs: best.hedge.delayMs }));
  for (const other of rest) {
    if (other !== best.hedge?.partner) attempts.push(attempt(other.server, 'next-expected-time'));
  }
  attempts.push(...seeded.map((seed) => attempt(seed.server, seed.reason === 'cold-start-origin-order' ? 'unmeasured-origin-order' : seed.reason)), ...lastResort);
  return attempts;
}

/**
 * The client's own queue on a server (queue-ahead.ts) delays the head: the timeout and the
 * deadline start when the request could start, not when it joined the queue.
 */
function queueWaitOf(input: PlanInput, records: ReadonlyMap<ServerId, ServerRecord>, options: WebppOptions, sizeBytes: number): (server: ServerId) => number {
  // A link whose pace is not measured yet is priced at the measured links' harmonic mean (score, below), as its body is:
  // unpriced, its queue cost nothing and a burst piled onto it.
  let fallbackRate: number | undefined | null = null;
  return (server) => {
    if (input.inFlight === undefined) return 0;
    const record = records.get(server);
    const ttfbMeanMs = record?.measured === true ? record.ttfb.meanMs() : options.initialTimeoutMs / options.timeoutQuantileMultiple;
    const rate = record?.throughput.bytesPerMs() ?? (fallbackRate === null ? (fallbackRate = harmonicMeanRate(input.candidates, records)) : fallbackRate);
    const queue = queueAhead(server, input.inFlight, sizeBytes, ttfbMeanMs, rate, input.nowMs, connectionsFor(record?.protocol), record?.concurrency.perExchangeMs());
    // The browser's connections and the server's workers are two stages in series: the slower bounds the wait (Lazowska et al. 1984, §5.2).
    return Math.max(queue.connectionWaitMs, queue.serverWaitMs) + queue.sharedLinkMs;
  };
}

interface Ranking {
  /** The measured, available candidates, best first (by their hedged time when a hedge pays). */
  ranked: Scored[];
  /** The equivalent-server set's members among them (equivalent-set.ts). */
  members: Estimated[];
  /** The first attempt's weights (load-spread.ts). */
  spread: Spread[];
  state: SpreadState;
}

/** Steps 2 and 3 of the header: expected times (aged, pushed, queued, brownouts), hedges, the equivalent set and its spread. */
function rank(
  measured: ServerId[],
  candidates: ServerId[],
  records: ReadonlyMap<ServerId, ServerRecord>,
  options: WebppOptions,
  hedgeAffordable: boolean,
  herd: HerdContext,
  input: PlanInput,
  queueWaitMs: (server: ServerId) => number,
): Ranking {
  const ranked = score(measured, candidates, records, options, input);
  for (const scored of ranked) {
    const pushedMs = herd.pushed.get(scored.server)?.estimateMs(scored.record.lastSampleAtMs, input.nowMs, options);
    const pushed = herd.pushed.get(scored.server);
    const shiftMs = pushed === undefined ? 0 : pushed.queueShiftMs(input.nowMs, options);
    scored.expectedMs = pushedMs === undefined ? Math.max(0, agedExpectedMs(scored, input.nowMs, options) + shiftMs) : pushedMs + scored.bodyMs;
    // Bursts: the wait behind this client's own exchanges there (queue-ahead.ts).
    scored.expectedMs += queueWaitMs(scored.server);
    // Brownouts: the expected time of trying until an answer, E / (1 − p) for its 5xx share p (brownout.ts).
    scored.expectedMs = scored.record.errors.penalisedMs(scored.expectedMs);
  }
  if (hedgeAffordable) addHedges(ranked, options);
  const effective = (s: Scored): number => s.hedge?.expectedMs ?? s.expectedMs;
  ranked.sort((a, b) => effective(a) - effective(b) || a.order - b.order);

  const estimates = ranked.map((scored) => ({ server: scored.server, expectedMs: effective(scored) }));
  const members = herd.equivalentSet.update(estimates, options);
  const queueing = (server: ServerId): number => herd.pushed.get(server)?.busyShare(input.nowMs, options) ?? 0;
  const state = herd.spreads.of(candidates);
  const spread = spreadWeights(estimates, members, queueing, options, state.spill, input.nowMs);
  return { ranked, members, spread, state };
}

/** The preferred server's entry when preferred.ts holds it as good as the best. */
function preferredOf(preferred: ServerId | undefined, ranked: readonly Scored[], members: readonly Estimated[]): Scored | undefined {
  const effective = (s: Scored): number => s.hedge?.expectedMs ?? s.expectedMs;
  return preferredEquivalent(preferred, ranked[0] as Scored, ranked, new Set(members.map((member) => member.server)), effective);
}

/**
 * ClientPolicy.isSoleFirstChoice: would a plan with `preferred: server` send the request to
 * `server` first, unhedged (or with a hedge worth less than the worker's own cost), while the
 * servers do not ask for load to be spread? The same
 * ranking as planAttempts (with the hedge budget as it is now), without its side effects on
 * the budgets; a cold start (nothing measured) never.
 */
export function soleFirstChoice(input: PlanInput, records: ReadonlyMap<ServerId, ServerRecord>, options: WebppOptions, hedgeAffordable: boolean, herd: HerdContext, server: ServerId): boolean {
  const candidates = [...new Set(input.candidates)];
  const own = records.get(server);
  if (!candidates.includes(server) || own?.measured !== true || own.state === 'failed') return false;
  const measured = candidates.filter((candidate) => records.get(candidate)?.measured === true && records.get(candidate)?.state !== 'failed');
  const sizeBytes = input.method.toUpperCase() === 'HEAD' ? 0 : Math.max(0, input.sizeBytes ?? 0);
  const { ranked, members, state } = rank(measured, candidates, records, options, hedgeAffordable, herd, input, queueWaitOf(input, records, options, sizeBytes));
  // Not while the servers ask for load to be spread (load-spread.ts): the draw decides then;
  // unless `server` is the only one to draw from (a URL bound to it alone: nowhere to spread it).
  if (state.spill.loaded && ranked.length > 1) return false;
  const preferred = preferredOf(server, ranked, members);
  if (preferred?.server !== server) return false;
  // A hedge keeps the request with the worker only when it is expected to save more than the
  // worker costs a request it takes (issue 22: the worker's own cost counts against it).
  return preferred.hedge === undefined || preferred.expectedMs - preferred.hedge.expectedMs < WORKER_REQUEST_COST_MS;
}

/**
 * What the worker adds to a request it answers, over the browser fetching it itself from the
 * same server (ms): `npm run bench page-cost`'s per-request row, webpp − direct, sequential,
 * on loopback: +3.1 and +3.4 ms (5 KB, 50 KB) on an idle machine at fc680b2, +3.6 and +3.9 ms
 * at 4a60b55 (docs/benchmarks/page-cost.json, docs/service-worker.md "What the worker costs a
 * page"). The smallest measured, so a hedge worth at least this much still keeps the request.
 */
const WORKER_REQUEST_COST_MS = 3;

/**
 * Cold start, bursts: with nothing measured, every replica is a priori alike but for the
 * origin's order, so a burst planned before any answer joins the shortest queue of this
 * client's own exchanges (stable in the seed order). Join-the-shortest-queue is optimal for
 * identical servers (Winston, "Optimality of the shortest line discipline", J. Appl. Prob.
 * 1977); without it a first page's whole burst went to the origin's first replica.
 */
function coldSpread<T extends { server: ServerId }>(seeded: T[], inFlight: PlanInput['inFlight']): T[] {
  if (inFlight === undefined || inFlight.length === 0 || seeded.length < 2) return seeded;
  const queued = new Map<ServerId, number>();
  for (const exchange of inFlight) queued.set(exchange.server, (queued.get(exchange.server) ?? 0) + 1);
  return seeded
    .map((seed, order) => ({ seed, order, queued: queued.get(seed.server) ?? 0 }))
    .sort((a, b) => a.queued - b.queued || a.order - b.order)
    .map((entry) => entry.seed);
}

/**
 * The client's very first request, with nothing measured, nothing in flight, no aggregate or
 * pushed load to seed the order (seed.ts), and a body not known
 * to be small (under rangeRefreshBytes, where only the first byte is at stake), races the first
 * COLD_RACE_SERVERS replicas at once (the first head wins, the others are cancelled at it):
 * one unlucky pick (a thin link for a 1 MB first resource) would otherwise cost the whole
 * visit, and the race measures three replicas' first bytes in one round trip. Two extra
 * requests once per client, outside the budget as the cold start's first measurements are.
 * Dean and Barroso's
 * "tied requests" at the one moment the client knows nothing to choose by.
 */
const COLD_RACE_SERVERS = 3;

function coldRace(seeded: readonly { server: ServerId; reason: string }[], inFlight: PlanInput['inFlight'], sizeBytes: number | undefined, options: WebppOptions): number {
  if (inFlight !== undefined && inFlight.length > 0) return 0;
  // An aggregate of other clients already tells which to pick (as pushed service times do: the caller).
  if (seeded.some((seed) => seed.reason !== 'cold-start-origin-order')) return 0;
  // A body known to be small cannot be ruined by a thin link: only its first byte is at stake.
  if (sizeBytes !== undefined && sizeBytes < options.rangeRefreshBytes) return 0;
  return Math.min(COLD_RACE_SERVERS, seeded.length);
}

function score(
  measured: ServerId[],
  candidates: ServerId[],
  records: ReadonlyMap<ServerId, ServerRecord>,
  options: WebppOptions,
  input: PlanInput,
): Scored[] {
  const sizeBytes = input.method.toUpperCase() === 'HEAD' ? 0 : Math.max(0, input.sizeBytes ?? 0);
  // A server whose throughput is not known yet is assumed to be like the measured ones: its
  // expected body time is size · E[1 / rate] over them, i.e. the size over their harmonic
  // mean rate. The time is linear in 1 / rate, so by Jensen's inequality the arithmetic mean
  // of the rates (what this used before) under-estimates it, and a thin link never measured
  // borrowed the fat links' pace.
  const fallbackRate = harmonicMeanRate(measured, records);
  return measured.map((server) => {
    const record = records.get(server) as ServerRecord;
    const ttfb = record.ttfb.weighted();
    const bodyMs = bodyMsOf(sizeBytes, record.throughput.bytesPerMs() ?? fallbackRate);
    return { server, record, order: candidates.indexOf(server), ttfb, bodyMs, expectedMs: expectedMs(ttfb, bodyMs) };
  });
}

/**
 * The expected time of a server, aged with optimism: the longer since its last sample, the
 * more it moves from its weighted mean toward what it has done at its best (the 25th
 * percentile of its history sketch, whose half-life is ten times longer), with the
 * estimate's half-life:
 *
 *   E_aged = E − max(0, mean − p25) · (1 − 2^(−age / halfLife))
 *
 * Finagle's PeakEwma lets an idle node's cost decay toward 0 ("observe(0.0)" in get()), so
 * that the balancer tries it again; decaying toward the server's own good level instead
 * retries only servers that have been better, with a real request — no extra request —
 * and a single slow answer puts the estimate back at once (age 0).
 */
function agedExpectedMs(scored: Scored, nowMs: number, options: WebppOptions): number {
  const ageMs = Math.max(0, nowMs - scored.record.lastSampleAtMs);
  const optimism = 1 - 2 ** (-ageMs / options.estimateHalfLifeMs);
  if (optimism <= 0) return scored.expectedMs;
  const goodMs = scored.record.history.quantileMs(0.25);
  const meanMs = scored.expectedMs - scored.bodyMs;
  return scored.expectedMs - Math.max(0, meanMs - goodMs) * optimism;
}

/**
 * For each server: its hedge by the best other server, if one pays. The delay d is chosen
 * from the primary's own distribution: among its quantiles from its hedgeQuantile on
 * (Dean and Barroso: defer the hedge to the p95; HEDGE_DELAY_STEPS), the one that minimises
 *
 *   J(d) = E[T hedged at d] + λ · P(X > d),   λ = the partner's expected time,
 *
 * i.e. the expected time plus the work of the hedges it fires, priced at what serving the
 * request once more costs (C3, NSDI 2015: replica selection must not amplify load). So a
 * replica with rare long stalls is hedged just past its fast majority (each hedge rescues a
 * stall), a steady replica is not hedged at all (hedges would buy almost nothing), and the
 * hedge is planned only when J(d) is below the unhedged expected time.
 */
/** The delays tried: the hedgeQuantile and quantiles between it and 1, as shares of the way (a handful keeps planning cheap). */
const HEDGE_DELAY_STEPS = [0, 0.2, 0.4, 0.6, 0.8, 0.9];

function addHedges(ranked: Scored[], options: WebppOptions): void {
  if (ranked.length < 2) return;
  const byPlain = [...ranked].sort((a, b) => a.expectedMs - b.expectedMs || a.order - b.order);
  for (const primary of ranked) {
    if (primary.record.empty(options)) continue;
    const partner = byPlain.find((other) => other !== primary);
    if (partner === undefined) continue;
    const plainMs = expectedMs(primary.ttfb, primary.bodyMs);
    let best: { delayMs: number; hedgedMs: number; costMs: number } | undefined;
    for (const delayMs of new Set(HEDGE_DELAY_STEPS.map((step) => weightedQuantile(primary.ttfb, options.hedgeQuantile + (1 - options.hedgeQuantile) * step)))) {
      const hedgedMs = expectedHedgedMs(primary.ttfb, primary.bodyMs, delayMs, partner.ttfb, partner.bodyMs);
      const costMs = hedgedMs + partner.expectedMs * hedgeFireShare(primary.ttfb, delayMs);
      if (best === undefined || costMs < best.costMs) best = { delayMs, hedgedMs, costMs };
    }
    if (best === undefined || best.costMs >= plainMs) continue;
    // The aged shift (agedExpectedMs) applies to the hedged time too, so that both compare alike.
    const shiftMs = plainMs - primary.expectedMs;
    primary.hedge = { partner, delayMs: best.delayMs, expectedMs: best.hedgedMs - shiftMs };
  }
}
