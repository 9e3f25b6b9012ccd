/**
 * The rows of docs/benchmarks/evaluation-generated.json: one per (world, policy), the fields
 * of the simulator's generalization.json (@webpp/simulator GeneralizationRow) measured in
 * Chromium, then folded over the runs (median, with the range).
 */
import { summarize } from '@webpp/simulator';
import type { GeneralizationRow } from '@webpp/simulator';
import { median } from '../runs.js';
import { bestSingle, withRegret } from '../regret.js';
import type { GeneratedPolicyRun } from './world-run.js';

export interface GeneratedRow extends GeneralizationRow {
  /** generated-<seed>. */
  scenario: string;
  stratum: string;
  best_single: string | null;
  /** Pages that started before the world's deadline (each policy its own). */
  pages: number;
  /** Runs this row is the median of. */
  runs: number;
  range?: Partial<Record<RangedField, [number, number]>>;
}

const GENERATED_RANGED_FIELDS = [
  'mean_ms',
  'p95_ms',
  'page_mean_ms',
  'relative_to_optimal_complete',
  'relative_to_best_single',
  'page_relative_to_best_single',
  'extra_requests_pct',
  'extra_bytes_pct',
  'failed_requests',
  'requests',
] as const;
type RangedField = (typeof GENERATED_RANGED_FIELDS)[number];

const round = (value: number, digits = 1): number => (Number.isFinite(value) ? Number(value.toFixed(digits)) : value);
const pct = (part: number, whole: number): number => (whole === 0 ? 0 : round((part / whole) * 100, 2));

export interface WorldInfo {
  seed: number;
  heldOut: boolean;
  stratum: string;
  shape: 'page' | 'sequential';
}

/**
 * The pages every policy loaded: a slow policy starts fewer pages before the world's
 * deadline, and means over different pages would not compare. Keys "client/page".
 */
export function commonPages(runs: readonly Pick<GeneratedPolicyRun, 'pages'>[]): Set<string> {
  const [first, ...rest] = runs.map((run) => new Set(run.pages.map((page) => `${page.client}/${page.page}`)));
  return new Set([...(first ?? [])].filter((key) => rest.every((set) => set.has(key))));
}

/** Each run cut to the pages every policy loaded (commonPages). */
function onCommonPages(runs: readonly GeneratedPolicyRun[]): GeneratedPolicyRun[] {
  const common = commonPages(runs);
  const kept = (item: { client: number; page: number }): boolean => common.has(`${item.client}/${item.page}`);
  return runs.map((run) => ({ ...run, records: run.records.filter(kept), pages: run.pages.filter(kept) }));
}

/**
 * One run of one world: a row per policy, over the pages every policy loaded, with the ratios
 * against optimal-complete and the best direct single replica. The extra requests and bytes
 * are over the whole run (the emulators' counts cannot be cut by page).
 */
export function worldRows(world: WorldInfo, measured: readonly GeneratedPolicyRun[]): GeneratedRow[] {
  const runs = onCommonPages(measured);
  const whole = new Map(measured.map((run) => [run.policy, run]));
  const base = runs.map((run) => {
    const all = whole.get(run.policy)!;
    const allBytes = all.records.reduce((sum, record) => sum + record.sizeBytes, 0);
    const ok = run.records.filter((record) => record.ok);
    const summary = summarize(ok.map((record) => record.responseMs));
    const sentBytes = [...run.traffic.gets.values()].flat().reduce((sum, get) => sum + get.bodyBytes, 0);
    const pageMs = run.pages.map((page) => page.pageMs);
    return {
      scenario: `generated-${world.seed}`,
      seed: world.seed,
      held_out: world.heldOut,
      stratum: world.stratum,
      policy: run.policy,
      mean_ms: round(summary.meanMs),
      p95_ms: round(summary.p95Ms),
      relative_to_optimal_complete: Number.NaN,
      relative_to_best_single: Number.NaN,
      // What the replicas received beyond one request per page request: failovers, hedges,
      // probes, refreshes, resumes, and optimal-complete's copies (the emulators' count).
      // (Connections refused in an outage never reach the emulators: not below 0.)
      extra_requests_pct: Math.max(0, pct(run.traffic.requests - all.records.length, all.records.length)),
      extra_bytes_pct: Math.max(0, pct(sentBytes - allBytes, allBytes)),
      failed_requests: run.records.length - ok.length,
      requests: run.records.length,
      pages: run.pages.length,
      best_single: null,
      runs: 1,
      ...(world.shape === 'page' && pageMs.length > 0 ? { page_mean_ms: round(pageMs.reduce((sum, ms) => sum + ms, 0) / pageMs.length) } : {}),
    } satisfies GeneratedRow;
  });
  const optimal = base.find((row) => row.policy === 'optimal-complete');
  const bestPage = world.shape === 'page' ? bestSingle(base.filter((row) => row.page_mean_ms !== undefined).map((row) => ({ ...row, mean_ms: row.page_mean_ms! }))) : undefined;
  return withRegret(base).map((row) => ({
    ...row,
    relative_to_optimal_complete: optimal ? round(row.mean_ms / optimal.mean_ms, 3) : Number.NaN,
    ...(bestPage && row.page_mean_ms !== undefined ? { page_relative_to_best_single: round(row.page_mean_ms / bestPage.page_mean_ms!, 3) } : {}),
  }));
}

/** The runs of the sample folded: per (world, policy) the median of each figure over the runs, with its range. */
export function foldRuns(runs: readonly (readonly GeneratedRow[])[]): GeneratedRow[] {
  const keys = [...new Set(runs.flatMap((rows) => rows.map((row) => `${row.seed}\u0000${row.policy}`)))];
  return keys.map((key) => {
    const [seed, policy] = key.split('\u0000') as [string, string];
    const rows = runs.map((run) => run.find((row) => String(row.seed) === seed && row.policy === policy)).filter((row): row is GeneratedRow => row !== undefined);
    const folded: GeneratedRow = { ...rows[0]!, runs: rows.length };
    if (rows.length === 1) return folded;
    folded.range = {};
    for (const field of GENERATED_RANGED_FIELDS) {
      const values = rows.map((row) => row[field]).filter((value): value is number => typeof value === 'number' && Number.isFinite(value));
      if (values.length === 0) continue;
      (folded as unknown as Record<string, number>)[field] = round(median(values), 3);
      folded.range[field] = [Math.min(...values), Math.max(...values)];
    }
    // The best single of the run whose own ratio is the median one.
    const middle = [...rows].sort((a, b) => a.relative_to_best_single - b.relative_to_best_single)[Math.floor((rows.length - 1) / 2)]!;
    folded.best_single = middle.best_single;
    return folded;
  });
}
