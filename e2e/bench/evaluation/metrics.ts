/**
 * From what the pages, the worker and the emulators saw to the rows of
 * docs/benchmarks/results.json.
 */
import { summarize } from '@webpp/simulator';
import type { BrowserPolicyRun, PageRecord } from './browser-run.js';
import { emulatedMs } from './cluster.js';
import type { PolicyTraffic } from './cluster.js';

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
  /** HTTP requests the worker sent (attempts + refreshes + probes), from its decision events. */
  clientHttpRequests: number | null;
  /** HTTP requests the emulators received for this policy (refused connections never arrive). */
  serverHttpRequests: number;
  /** (client-side HTTP requests − page requests) ÷ page requests, in %; server-side when there is no worker. */
  extraRequestsPct: number;
  extraRequestsPctServer: number;
  refreshes: number;
  probes: number;
  /** Requests served by each server (from the worker's decisions). */
  servedBy: Record<string, number>;
  /** Page requests with no decision event (should be 0). */
  missingDecisions: number;
  bySize: { sizeBytes: number; count: number; meanMs: number; failed: number }[];
}

const round = (value: number, digits = 1): number => {
  if (!Number.isFinite(value)) return value;
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
};

export function measure(scenario: string, run: BrowserPolicyRun, traffic: PolicyTraffic, serverNameByOrigin: Record<string, string>): PolicyMeasurement {
  const { records } = run;
  const ok = records.filter((record) => record.ok);
  const summary = summarize(ok.map((record) => record.responseMs));
  const failureReasons: Record<string, number> = {};
  for (const record of records) if (!record.ok) failureReasons[record.error ?? 'unknown'] = (failureReasons[record.error ?? 'unknown'] ?? 0) + 1;

  let clientHttpRequests: number | null = null;
  const servedBy: Record<string, number> = {};
  let missingDecisions = 0;
  let refreshes = 0;
  let probes = 0;
  if (run.worker) {
    const { decisions } = run.worker;
    refreshes = run.worker.refreshes;
    probes = run.worker.probes;
    clientHttpRequests = decisions.reduce((sum, decision) => sum + decision.attempts.length, 0) + refreshes + probes;
    for (const decision of decisions) {
      if (decision.outcome !== 'served' || decision.servedBy === null) continue;
      const name = serverNameByOrigin[decision.servedBy] ?? decision.servedBy;
      servedBy[name] = (servedBy[name] ?? 0) + 1;
    }
    missingDecisions = Math.max(0, records.length - decisions.length);
  } else {
    // Without a worker: which replica's body won is not visible; count what the servers got.
    Object.assign(servedBy, traffic.byServer);
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
    extraRequestsPct: clientHttpRequests === null ? extraRequestsPctServer : pct(clientHttpRequests),
    extraRequestsPctServer,
    refreshes,
    probes,
    servedBy,
    missingDecisions,
    bySize: sizes.map((sizeBytes) => {
      const ofSize = records.filter((record) => record.sizeBytes === sizeBytes);
      const good = ofSize.filter((record) => record.ok);
      return { sizeBytes, count: ofSize.length, meanMs: round(summarize(good.map((record) => record.responseMs)).meanMs), failed: ofSize.length - good.length };
    }),
  };
}

/**
 * Time a browser request takes beyond what the emulated link accounts for (the worker, the
 * origin, Chromium, the loopback), from requests served by exactly one attempt: page time −
 * (delay + stalls + size ÷ bandwidth of the plan the emulator drew for it). Used as the
 * simulator's `serviceMs`, so that both sides share the same fixed per-request cost.
 */
export function clientOverheadMs(runs: readonly { records: PageRecord[]; traffic: PolicyTraffic }[]): { medianMs: number; samples: number } {
  const overheads: number[] = [];
  for (const { records, traffic } of runs) {
    for (const record of records) {
      if (!record.ok) continue;
      const seen = traffic.gets.get(`${record.client}|${record.index}`);
      if (!seen || seen.length !== 1) continue;
      const [only] = seen;
      if (!only?.plan || only.outcome !== 'ok') continue;
      overheads.push(record.responseMs - emulatedMs(only.plan, record.sizeBytes));
    }
  }
  const summary = summarize(overheads);
  return { medianMs: summary.medianMs, samples: overheads.length };
}

export { round };
