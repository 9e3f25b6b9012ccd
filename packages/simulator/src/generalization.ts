/**
 * The generalization suite (issue 22 §1, §3): every policy on generated worlds, training
 * and held-out seeds apart, judged by regret — against the best single replica in hindsight
 * and against `optimal-complete` (every replica at once, the first complete body wins).
 */
import { generateWorld, type GeneratedWorld } from '@webpp/netem/model';
import { freecdnPolicy } from './policies/freecdn.js';
import { optimalPolicy, registryPolicy, singleServerPolicy, webppPaperPolicy } from './policies/engine-policies.js';
import type { Policy } from './policy.js';
import { quantileOfSorted } from './statistics.js';
import { runWorld, type WorldRunResult } from './world-run.js';

/** The policies compared beside the singles, in report order. */
export const GENERALIZATION_POLICIES = ['webpp', 'webpp-paper', 'freecdn', 'optimal-complete'] as const;

/** webpp (core's default), the paper's policy, freecdn's rule, optimal-complete and every single replica. */
export function generalizationPolicies(servers: readonly string[]): Policy[] {
  return [
    registryPolicy('webpp'),
    webppPaperPolicy(),
    freecdnPolicy(),
    { ...optimalPolicy(), name: 'optimal-complete' },
    ...servers.map((server) => singleServerPolicy(server)),
  ];
}

export interface GeneralizationRow {
  seed: number;
  held_out: boolean;
  policy: string;
  mean_ms: number;
  p95_ms: number;
  /** mean / optimal-complete's mean. */
  relative_to_optimal_complete: number;
  /** mean / the best single replica's mean (bestSingle below). */
  relative_to_best_single: number;
  extra_requests_pct: number;
  extra_bytes_pct: number;
  failed_requests: number;
  requests: number;
  /** Page-shaped workloads only: mean page time, and its ratio to the best single's (by page time). */
  page_mean_ms?: number;
  page_relative_to_best_single?: number;
  /** Not for single replicas: successful requests per server, and times a server was marked failed. */
  served_by?: Record<string, number>;
  marked_failed?: number;
}

/** What one seed's world holds, for reading the rows. */
export interface GeneralizationWorld {
  seed: number;
  held_out: boolean;
  replicas: number;
  shape: string;
  http: string;
  requests: number;
  best_single: string;
  traits: string[];
}

/**
 * The best single replica in hindsight: of the singles with the fewest failed requests, the
 * lowest mean (a replica that lost requests in an outage is not "best" for its survivors'
 * mean). `key` picks the measure (mean request time, or page time).
 */
export function bestSingle(results: readonly WorldRunResult[], key: (result: WorldRunResult) => number = (result) => result.meanMs): WorldRunResult | undefined {
  const singles = results.filter((result) => result.policy.startsWith('single-') && Number.isFinite(key(result)));
  const fewestFailed = Math.min(...singles.map((result) => result.failed));
  return singles.filter((result) => result.failed === fewestFailed).sort((a, b) => key(a) - key(b))[0];
}

const round = (value: number, digits = 1): number => (Number.isFinite(value) ? Number(value.toFixed(digits)) : value);

/** Every policy on one world: its rows, and its description. */
export function runSeed(seed: number, policiesFor: (servers: readonly string[]) => Policy[] = generalizationPolicies): { world: GeneralizationWorld; rows: GeneralizationRow[] } {
  const generated: GeneratedWorld = generateWorld(seed);
  const servers = Object.keys(generated.scenario.servers);
  const results = policiesFor(servers).map((policy) => runWorld(generated, policy));
  const optimal = results.find((result) => result.policy === 'optimal-complete');
  const best = bestSingle(results);
  const bestPage = generated.workload.shape === 'page' ? bestSingle(results, (result) => result.pageMeanMs ?? Number.NaN) : undefined;
  const rows = results.map((result): GeneralizationRow => {
    const row: GeneralizationRow = {
      seed,
      held_out: generated.heldOut,
      policy: result.policy,
      mean_ms: round(result.meanMs),
      p95_ms: round(result.p95Ms),
      relative_to_optimal_complete: optimal ? round(result.meanMs / optimal.meanMs, 3) : Number.NaN,
      relative_to_best_single: best ? round(result.meanMs / best.meanMs, 3) : Number.NaN,
      extra_requests_pct: round(result.extraRequestsPct, 2),
      extra_bytes_pct: round(result.extraBytesPct, 2),
      failed_requests: result.failed,
      requests: result.requests,
    };
    if (!result.policy.startsWith('single-')) Object.assign(row, { served_by: result.servedBy, marked_failed: result.markedFailed });
    if (result.pageMeanMs !== null) {
      row.page_mean_ms = round(result.pageMeanMs);
      if (bestPage?.pageMeanMs) row.page_relative_to_best_single = round(result.pageMeanMs / bestPage.pageMeanMs, 3);
    }
    return row;
  });
  const world: GeneralizationWorld = {
    seed,
    held_out: generated.heldOut,
    replicas: servers.length,
    shape: generated.workload.shape,
    http: generated.workload.http,
    requests: results[0]?.requests ?? 0,
    best_single: best?.policy ?? '',
    traits: generated.traits,
  };
  return { world, rows };
}

export interface RatioSummary {
  median: number;
  p90: number;
  worst: number;
  mean: number;
}

export interface PolicySummary {
  seeds: number;
  relative_to_optimal_complete: RatioSummary;
  relative_to_best_single: RatioSummary;
  /** Page-shaped seeds only. */
  page_relative_to_best_single: RatioSummary | null;
  extra_requests_pct: RatioSummary;
  extra_bytes_pct: RatioSummary;
  failed_requests: number;
  /** Share of seeds where this policy's mean is at most freecdn's. */
  share_no_worse_than_freecdn: number | null;
}

function ratioSummary(values: number[]): RatioSummary {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  const mean = sorted.reduce((sum, value) => sum + value, 0) / sorted.length;
  return { median: round(quantileOfSorted(sorted, 0.5), 3), p90: round(quantileOfSorted(sorted, 0.9), 3), worst: round(sorted.at(-1) ?? Number.NaN, 3), mean: round(mean, 3) };
}

/** Per policy (singles pooled as "best-single" is not a policy: they are left out), for one seed set. */
export function summarizeRows(rows: readonly GeneralizationRow[]): Record<string, PolicySummary> {
  const freecdnMean = new Map(rows.filter((row) => row.policy === 'freecdn').map((row) => [row.seed, row.mean_ms]));
  const policies = [...new Set(rows.map((row) => row.policy))].filter((policy) => !policy.startsWith('single-'));
  return Object.fromEntries(
    policies.map((policy) => {
      const own = rows.filter((row) => row.policy === policy);
      const pages = own.filter((row) => row.page_relative_to_best_single !== undefined);
      const compared = own.filter((row) => freecdnMean.has(row.seed));
      const summary: PolicySummary = {
        seeds: own.length,
        relative_to_optimal_complete: ratioSummary(own.map((row) => row.relative_to_optimal_complete)),
        relative_to_best_single: ratioSummary(own.map((row) => row.relative_to_best_single)),
        page_relative_to_best_single: pages.length > 0 ? ratioSummary(pages.map((row) => row.page_relative_to_best_single!)) : null,
        extra_requests_pct: ratioSummary(own.map((row) => row.extra_requests_pct)),
        extra_bytes_pct: ratioSummary(own.map((row) => row.extra_bytes_pct)),
        failed_requests: own.reduce((sum, row) => sum + row.failed_requests, 0),
        share_no_worse_than_freecdn:
          compared.length > 0 ? round(compared.filter((row) => row.mean_ms <= freecdnMean.get(row.seed)!).length / compared.length, 3) : null,
      };
      return [policy, summary];
    }),
  );
}
