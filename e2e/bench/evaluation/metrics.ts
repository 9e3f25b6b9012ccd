/**
 * From what the pages, the worker and the emulators saw to the rows of
 * docs/benchmarks/results.json.
 */
import { compileScenario, meanOf } from '@webpp/netem';
import type { Scenario } from '@webpp/netem';
import { summarize } from '@webpp/simulator';
import type { ClientDelaySample } from '@webpp/simulator';
import type { BrowserPolicyRun, PageRecord, WorkerDecision } from './browser-run.js';
import { emulatedMs } from './cluster.js';
import type { PolicyTraffic, ServerSideRequest } from './cluster.js';

export interface PolicyMeasurement {
  scenario: string;
  policy: string;
  requests: number;
  succeeded: number;
  failed: number;
  failureReasons: Record<string, number>;
  meanMs: number;
  medianMs: number;
  p95Ms: number;
  /**
   * HTTP requests the worker sent: attempts + refreshes + probes + body resumes from its live
   * events, or the emulators' count for the policy when that is higher.
   */
  clientHttpRequests: number | null;
  /** HTTP requests the emulators received for this policy (refused connections never arrive). */
  serverHttpRequests: number;
  /** (client-side HTTP requests − page requests) ÷ page requests, in %; server-side when there is no worker. */
  extraRequestsPct: number;
  extraRequestsPctServer: number;
  /** Attempts beyond the first of each request: failovers and hedges (and the parallel copies of the worker's optimal). */
  extraAttempts: number;
  refreshes: number;
  probes: number;
  /**
   * Requests for the rest of a body that broke off mid-stream: the worker's body-resumed
   * events, or the emulators' count of resume requests when that is higher.
   */
  resumes: number;
  /** Requests served by each server (from the worker's decisions). */
  servedBy: Record<string, number>;
  /** Page requests with no decision event (should be 0). */
  missingDecisions: number;
  /** Outcomes of the worker's attempts (served, cancelled, timeout, network-error…). */
  attemptOutcomes: Record<string, number>;
  /** Failed attempts (timeout, network error, 5xx) by server: what made the worker fail over. */
  failedAttemptsByServer: Record<string, number>;
  /**
   * The worker's time to first byte minus the emulated link's (delay + first-byte stall), for
   * the single-server policies (one GET per request, matched by order): the measurement noise
   * a latency estimate sees beyond the link's. Null for the other policies.
   */
  ttfbBeyondLinkMs: { medianMs: number; p95Ms: number; samples: number } | null;
  /**
   * Share of successful requests the worker served from the replica with the lowest expected
   * response time when the request started (the simulator's best_server_share); null without a worker.
   */
  bestServerShare: number | null;
  bySize: { sizeBytes: number; count: number; meanMs: number; failed: number }[];
}

const round = (value: number, digits = 1): number => {
  if (!Number.isFinite(value)) return value;
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
};

/**
 * The replica with the lowest expected response time at scenario time `atMs` for a body of
 * `sizeBytes` (mean delay + mean stall + size ÷ bandwidth; a server in an outage is never
 * best), as the simulator computes it (SimulatedNetwork.expectedResponseMs).
 */
export function bestServerOracle(scenario: Scenario): (atMs: number, sizeBytes: number) => string | undefined {
  const timelines = compileScenario(scenario);
  return (atMs, sizeBytes) => {
    let best: string | undefined;
    let bestMs = Number.POSITIVE_INFINITY;
    for (const [server, timeline] of timelines) {
      if (timeline.outageAt(atMs)) continue;
      const link = timeline.linkAt(atMs);
      const stallMs = link.stall ? link.stall.probability * meanOf(link.stall.durationMs) : 0;
      const transferMs = link.bandwidthBytesPerSec ? (sizeBytes / link.bandwidthBytesPerSec) * 1000 : 0;
      const expectedMs = meanOf(link.delayMs) + stallMs + transferMs;
      if (expectedMs < bestMs) [best, bestMs] = [server, expectedMs];
    }
    return best;
  };
}

export function measure(
  scenario: string,
  run: BrowserPolicyRun,
  traffic: PolicyTraffic,
  serverNameByOrigin: Record<string, string>,
  bestServerAt: (atMs: number, sizeBytes: number) => string | undefined,
): PolicyMeasurement {
  const { records } = run;
  const ok = records.filter((record) => record.ok);
  const summary = summarize(ok.map((record) => record.responseMs));
  const failureReasons: Record<string, number> = {};
  for (const record of records) if (!record.ok) failureReasons[record.error ?? 'unknown'] = (failureReasons[record.error ?? 'unknown'] ?? 0) + 1;

  let clientHttpRequests: number | null;
  const servedBy: Record<string, number> = {};
  let missingDecisions = 0;
  const attemptOutcomes: Record<string, number> = {};
  const failedAttemptsByServer: Record<string, number> = {};
  let ttfbBeyondLinkMs: PolicyMeasurement['ttfbBeyondLinkMs'] = null;
  let bestServerShare: number | null = null;
  let extraAttempts = 0;
  let refreshes = 0;
  let probes = 0;
  let resumes = 0;
  if (run.worker) {
    const { decisions } = run.worker;
    refreshes = run.worker.refreshes;
    probes = run.worker.probes;
    resumes = run.worker.resumes;
    // A resume that had to try several replicas is one body-resumed event but several
    // requests: the emulators' count of resume requests (Range GETs past byte 0) is used
    // when it is higher (it misses requests to a server that refused the connection).
    resumes = Math.max(resumes, traffic.resumeRequests);
    // Each count misses some: the worker's events miss background requests still in flight
    // when they are read, the emulators miss connections refused in an outage. The higher one.
    clientHttpRequests = Math.max(traffic.requests, decisions.reduce((sum, decision) => sum + decision.attempts.length, 0) + refreshes + probes + resumes);
    for (const decision of decisions) {
      extraAttempts += Math.max(0, decision.attempts.length - 1);
      for (const attempt of decision.attempts) {
        attemptOutcomes[attempt.outcome] = (attemptOutcomes[attempt.outcome] ?? 0) + 1;
        if (attempt.outcome === 'timeout' || attempt.outcome === 'network-error' || attempt.outcome === 'server-error') {
          const name = serverNameByOrigin[attempt.server] ?? attempt.server;
          failedAttemptsByServer[name] = (failedAttemptsByServer[name] ?? 0) + 1;
        }
      }
      if (decision.outcome !== 'served' || decision.servedBy === null) continue;
      const name = serverNameByOrigin[decision.servedBy] ?? decision.servedBy;
      servedBy[name] = (servedBy[name] ?? 0) + 1;
    }
    missingDecisions = Math.max(0, records.length - decisions.length);
    const beyond: number[] = [];
    let served = 0;
    let servedByBest = 0;
    for (const { record, decision, get } of inOrder(records, decisions, traffic, run.policy.name)) {
      const [only] = decision?.attempts ?? [];
      if (get?.plan && decision?.attempts.length === 1 && only?.outcome === 'served' && only.ttfbMs !== null) {
        beyond.push(only.ttfbMs - get.plan.delayMs - (get.plan.stallPhase === 'first-byte' ? get.plan.stallMs : 0));
      }
      if (!record.ok || !decision?.servedBy) continue;
      served++;
      if (serverNameByOrigin[decision.servedBy] === bestServerAt(record.startMs, record.sizeBytes)) servedByBest++;
    }
    bestServerShare = served === 0 ? null : servedByBest / served;
    const summary = summarize(beyond);
    ttfbBeyondLinkMs = beyond.length === 0 ? null : { medianMs: round(summary.medianMs), p95Ms: round(summary.p95Ms), samples: beyond.length };
  } else if (run.policy.browser.mode === 'parallel') {
    // Without a worker the page itself sends one request per replica for each page request
    // (the servers miss the refused ones); which replica's body won is not recorded.
    clientHttpRequests = records.length * Object.keys(serverNameByOrigin).length;
    extraAttempts = clientHttpRequests - records.length;
  } else {
    // A direct single replica, or freecdn's own worker: only the emulators' count is known.
    clientHttpRequests = null;
    extraAttempts = Math.max(0, traffic.requests - records.length);
  }
  const pageRequests = records.length;
  const pct = (http: number): number => (pageRequests === 0 ? 0 : ((http - pageRequests) / pageRequests) * 100);
  const extraRequestsPctServer = pct(traffic.requests);
  const sizes = [...new Set(records.map((record) => record.sizeBytes))].sort((a, b) => a - b);

  return {
    scenario,
    policy: run.policy.name,
    requests: pageRequests,
    succeeded: ok.length,
    failed: pageRequests - ok.length,
    failureReasons,
    meanMs: summary.meanMs,
    medianMs: summary.medianMs,
    p95Ms: summary.p95Ms,
    clientHttpRequests,
    serverHttpRequests: traffic.requests,
    // Without a client-side count, connections refused in an outage (which never reach the emulators) must not make it negative.
    extraRequestsPct: clientHttpRequests === null ? Math.max(0, extraRequestsPctServer) : pct(clientHttpRequests),
    extraRequestsPctServer,
    extraAttempts,
    refreshes,
    probes,
    resumes,
    servedBy,
    missingDecisions,
    attemptOutcomes,
    failedAttemptsByServer,
    ttfbBeyondLinkMs,
    bestServerShare,
    bySize: sizes.map((sizeBytes) => {
      const ofSize = records.filter((record) => record.sizeBytes === sizeBytes);
      const good = ofSize.filter((record) => record.ok);
      return { sizeBytes, count: ofSize.length, meanMs: round(summarize(good.map((record) => record.responseMs)).meanMs), failed: ofSize.length - good.length };
    }),
  };
}

/**
 * Time a browser request takes beyond what the emulated link accounts for (the worker, the
 * origin, Chromium, the loopback), from requests that reached exactly one replica: page time −
 * (delay + stalls + size ÷ bandwidth of the plan the emulator drew for it). Each request is a
 * sample at its scenario time, split into the part before the response head (the worker's
 * time to first byte − the link's delay and first-byte stall) and the rest; the simulator
 * replays them as its client delay (@webpp/simulator client-delay.ts), so that both sides
 * meet the same per-request cost at the same moment.
 */
export function clientOverhead(
  runs: readonly { policy: string; records: PageRecord[]; decisions: readonly WorkerDecision[]; traffic: PolicyTraffic }[],
): { medianMs: number; samples: ClientDelaySample[] } {
  const samples: ClientDelaySample[] = [];
  for (const { policy, records, decisions, traffic } of runs) {
    for (const { record, decision, get } of inOrder(records, decisions, traffic, policy)) {
      if (!record.ok || !get?.plan || get.outcome !== 'ok') continue;
      const totalMs = record.responseMs - emulatedMs(get.plan, record.sizeBytes);
      const [only] = decision?.attempts ?? [];
      // Without the worker's time to first byte, the whole overhead counts as before the head.
      const firstByteMs =
        decision?.attempts.length === 1 && only?.ttfbMs !== null && only?.ttfbMs !== undefined
          ? Math.min(totalMs, only.ttfbMs - get.plan.delayMs - (get.plan.stallPhase === 'first-byte' ? get.plan.stallMs : 0))
          : totalMs;
      samples.push({ atMs: record.startMs, firstByteMs, bodyMs: totalMs - firstByteMs });
    }
  }
  return { medianMs: summarize(samples.map((sample) => sample.firstByteMs + sample.bodyMs)).medianMs, samples };
}

/** What belongs to one page request: its worker decision, and its one GET when the policy sends exactly one. */
interface RequestTrail {
  record: PageRecord;
  decision: WorkerDecision | undefined;
  get: ServerSideRequest | undefined;
}

const sizeOfPath = (url: string): number => Number(/\/files\/(\d+)\.bin/.exec(url)?.[1] ?? Number.NaN);

/**
 * A client's page requests are sequential, and all of them to one file share a URL (as in
 * the paper's workload): each request is matched with the worker's decisions and the
 * emulators' GETs by order, checked by file size; matching stops at the first disagreement.
 * A GET is matched only for single-server policies, which send exactly one GET per request
 * and nothing in the background.
 */
function inOrder(records: readonly PageRecord[], decisions: readonly WorkerDecision[], traffic: PolicyTraffic, policy: string): RequestTrail[] {
  const trails: RequestTrail[] = [];
  for (const client of new Set(records.map((record) => record.client))) {
    const mine = records.filter((record) => record.client === client).sort((a, b) => a.index - b.index);
    const theirDecisions = decisions.filter((decision) => new URL(decision.url).searchParams.get('c') === String(client));
    const gets = policy.startsWith('single-') ? [...(traffic.gets.get(client) ?? [])].filter((get) => get.range === undefined).sort((a, b) => a.arrivedAtMs - b.arrivedAtMs) : [];
    let decisionsAgree = true;
    let getsAgree = gets.length > 0;
    mine.forEach((record, k) => {
      const decision = theirDecisions[k];
      if (decisionsAgree && (!decision || sizeOfPath(decision.url) !== record.sizeBytes)) decisionsAgree = false;
      const get = gets[k];
      if (getsAgree && (!get || get.sizeBytes !== record.sizeBytes)) getsAgree = false;
      trails.push({ record, decision: decisionsAgree ? decision : undefined, get: getsAgree ? get : undefined });
    });
  }
  return trails;
}

export { round };
