/**
 * Background requests of the webpp policy, all counted as extra requests and all paid from
 * the one extra budget (budget-options.ts: a share of requests plus a floor), so that a
 * crowd of clients cannot take its own cluster down with measurements:
 * - probes of ejected servers, when their jittered backoff is due (backoff.ts); bounded by
 *   the backoff itself (a handful per outage, then one per probeBackoffCapMs);
 * - two refreshes of each server never measured (the cold start: learn the replicas from
 *   the first page instead of from user requests; the first exchange also sets up the
 *   connection, the second measures the server) — at most twice per server, as far as the
 *   budget's floor goes (then as it earns);
 * - one ranged refresh of each server whose throughput is unknown, once large resources
 *   are in use — at most once per server;
 * - probes, refreshes, hedges and failovers may borrow (down to the bucket's capacity in
 *   debt: over any run, extra ≤ share × requests + floor + capacity); the cold start's
 *   measurements need a token in hand; a probe is sent even with the debt at its limit
 *   (free then: its backoff bounds it);
 * - refreshes of the stalest server, within refreshBudgetShare of requests
 *   (token bucket), so that servers not in use are re-measured every few seconds and a
 *   change elsewhere, or a recovered best server, is noticed (the paper refreshes only
 *   after its TTL of 41 min). A ranged GET of rangeRefreshBytes when large resources are
 *   in use, so that throughput is measured too; a HEAD otherwise. An ejected server can be
 *   the stalest: it then gets an early probe from this budget, so that the end of a long
 *   outage is seen within seconds, not only when the backoff (up to a minute) comes round;
 * - when a server changes (a streak of first bytes beyond its own quantiles), every other
 *   server at once, on credit from the same budget.
 */
import type { BackgroundRequest, MaintenanceInput } from '../../engine/policy-types.js';
import type { ServerId } from '../../types.js';
import { probeDelayMs } from './backoff.js';
import type { WebppOptions } from './options.js';
import { BOOTSTRAP_SAMPLES, type ServerRecord } from './server-record.js';
import type { TokenBucket } from './token-bucket.js';

export interface MaintenanceContext {
  records: Map<ServerId, ServerRecord>;
  /** Creates the record of a server first seen. */
  recordOf(server: ServerId): ServerRecord;
  options: WebppOptions;
  refreshBucket: TokenBucket;
  /** The one budget of all extra requests (policy.ts). */
  extraBudget: TokenBucket;
  /** True while requests of at least rangeRefreshBytes are being made. */
  largeResourcesInUse: boolean;
  random: () => number;
  /** When the last change-triggered refresh round went out; updated here. */
  lastChangeRefreshAtMs: number;
}

export function dueBackground(input: MaintenanceInput, context: MaintenanceContext): BackgroundRequest[] {
  const { records, options, refreshBucket, extraBudget, random } = context;
  const { nowMs, inFlight } = input;
  const due: BackgroundRequest[] = [];
  const free = (server: ServerId): boolean => !inFlight.has(server) && !due.some((request) => request.server === server);

  for (const record of records.values()) {
    if (record.state !== 'failed' || record.nextProbeAtMs > nowMs) continue;
    // A probe is sent whatever the budget: the backoff alone bounds it (one per server every
    // probeBackoffCapMs / 2 at most), as Envoy ends an ejection after its ejection time
    // whatever else is going on. Held back by the debt, the best server stayed out for 8 s
    // after its outage (the outage scenario: re-decisions and failovers of the outage had spent
    // the budget; docs/selection.md, Recovery). It is charged when the server answers it
    // (policy.ts, observe), not when it is sent: a probe refused by a dead server did it no
    // work, as a failover after a refused connection. Charged at the send, the probes of the
    // chaos bench's dead replicas (160 in 1 545 requests) held the budget at its debt limit
    // and left nothing for the hedges and the fetches elsewhere of crawling bodies.
    // A server with a background request in flight is being probed already: the next probe
    // waits its turn (so that the maintenance timer is not due again at once).
    if (free(record.server)) {
      record.unpaidProbes++;
      due.push({ server: record.server, purpose: 'probe', method: 'head' });
    }
    record.probesSent++;
    record.updatedAtMs = Math.max(record.updatedAtMs, nowMs);
    record.nextProbeAtMs = nowMs + probeDelayMs(record.probesSent, options, random);
  }

  // In random order, so that the clients of one crowd measure different replicas, not all
  // the first listed (issue 13: the herd; Fei Section 4.3, a random pick spreads the load).
  // Breadth first: every replica is measured once before any gets its second measurement; the
  // floor's few tokens otherwise went to second samples while a replica of a short visit was
  // never measured at all (issue 22, starvation: on 11 of the 300 training worlds the best
  // single replica was never measured).
  const neverAsked = (server: ServerId): number => {
    const record = context.recordOf(server);
    return Math.min(1, record.bootstrapsSent + record.sampleCount);
  };
  for (const server of shuffled(input.candidates, random).sort((a, b) => neverAsked(a) - neverAsked(b))) {
    const record = context.recordOf(server);
    // A request in flight measures its server; servers that requests measure need none. Not past
    // that request's timeout (a server measured less than twice has the initial one): it was
    // answered elsewhere first (a cold-start race another replica won, its attempt here
    // cancelled) and measured nothing; on a short visit such a replica was otherwise never
    // measured (issue 22, training seeds 227 and 290).
    if (record.requestedAtMs > record.lastSampleAtMs && nowMs - record.requestedAtMs < options.initialTimeoutMs) continue;
    const bootstrapping = record.sampleCount === 0 || (record.bootstrapsSent > 0 && record.sampleCount < BOOTSTRAP_SAMPLES);
    if (!bootstrapping || record.bootstrapsSent >= BOOTSTRAP_SAMPLES || record.state === 'failed' || !free(server)) continue;
    if (!extraBudget.trySpend()) break;
    record.bootstrapsSent++;
    due.push(refresh(server, context));
  }

  // Size-aware ranking needs every server's throughput, and a HEAD times no body: once large
  // resources are in use, a server whose throughput is unknown gets one free ranged refresh.
  // Without it the cold start's refreshes, sent before any size was known (the worker learns
  // sizes from responses), leave the others at the average of the known rates — a slow
  // body's own — and the fast first byte with the slow body keeps every request.
  if (context.largeResourcesInUse) {
    for (const server of input.candidates) {
      const record = records.get(server);
      if (record === undefined || !record.measured || record.throughput.known || record.throughputBootstrapSent) continue;
      if (record.state === 'failed' || !free(server)) continue;
      if (!extraBudget.trySpend()) break;
      record.throughputBootstrapSent = true;
      due.push(refresh(server, context));
    }
  }

  // A change of a server (server-record.ts, noteChange): re-measure every other one now, on
  // credit from both budgets (the debt, at most their capacity, is paid back first).
  const changed = [...records.values()].filter((record) => record.changeSuspectedAtMs > context.lastChangeRefreshAtMs);
  if (changed.length > 0) {
    context.lastChangeRefreshAtMs = nowMs;
    for (const record of records.values()) {
      if (changed.includes(record) || record.state === 'failed' || !record.measured || !free(record.server)) continue;
      // No refreshMinIntervalMs here: a sample taken just before the change says nothing.
      if (!refreshBucket.borrow()) continue;
      if (!extraBudget.borrow()) break;
      due.push(refresh(record.server, context));
    }
  }

  if (refreshBucket.canSpend()) {
    // Random order: ties (servers never measured) go to different servers in a crowd.
    const pool = shuffled([...new Set<ServerId>([...input.candidates, ...records.keys()])], random);
    let stalest: ServerRecord | undefined;
    for (const server of pool) {
      const record = records.get(server);
      // Ejected servers compete too: the budget looks for changes, and a recovery is one.
      if (record === undefined || !free(server)) continue;
      if (record.measured && nowMs - record.lastSampleAtMs < options.refreshMinIntervalMs) continue;
      if (stalest === undefined || record.lastSampleAtMs < stalest.lastSampleAtMs) stalest = record;
    }
    if (stalest !== undefined && extraBudget.borrow() && refreshBucket.trySpend()) {
      due.push(stalest.state === 'failed' ? { server: stalest.server, purpose: 'probe', method: 'head' } : refresh(stalest.server, context));
    }
  }
  return due;
}

/** A copy of `items` in random order (Fisher–Yates, with the policy's injected random source). */
function shuffled<T>(items: readonly T[], random: () => number): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [copy[i], copy[j]] = [copy[j] as T, copy[i] as T];
  }
  return copy;
}

function refresh(server: ServerId, context: MaintenanceContext): BackgroundRequest {
  return context.largeResourcesInUse
    ? { server, purpose: 'refresh', method: 'range', rangeBytes: context.options.rangeRefreshBytes }
    : { server, purpose: 'refresh', method: 'head' };
}

/** When the next probe is due (the engine's maintenance timer), or undefined. */
export function nextProbeAtMs(records: Iterable<ServerRecord>): number | undefined {
  let next: number | undefined;
  for (const record of records) {
    if (record.state === 'failed' && (next === undefined || record.nextProbeAtMs < next)) next = record.nextProbeAtMs;
  }
  return next;
}
