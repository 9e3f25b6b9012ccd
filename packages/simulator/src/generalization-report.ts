/**
 * docs/benchmarks/generalization.md from generalization.json: the summary tables (training
 * and held-out apart), the goals of issue 22 against the held-out figures, and the worst
 * held-out seeds with what their worlds held.
 */
import type { PolicySummary } from './generalization.js';

export interface WorstSeed {
  seed: number;
  relative_to_best_single: number;
  relative_to_optimal_complete: number;
  best_single: string;
  served_by?: Record<string, number>;
  marked_failed?: number;
  shape: string;
  http: string;
  traits: string[];
}

export interface GeneralizationDocument {
  generator_version: number;
  training_seeds: { first: number; count: number };
  held_out_seeds: { first: number; count: number };
  seeds_run: { training: number; held_out: number };
  elapsed_s: number;
  summary: { training: Record<string, PolicySummary>; held_out: Record<string, PolicySummary> };
  worst_held_out: Record<string, WorstSeed[]>;
}

const fmt = (value: number | null | undefined): string => (value === null || value === undefined || !Number.isFinite(value) ? '–' : String(value));

function summaryTable(summary: Record<string, PolicySummary>): string {
  const lines = [
    '| policy | ÷ best single: median | p90 | worst | ÷ optimal-complete: median | p90 | worst | page ÷ best single: median | extra requests (mean %) | extra bytes (mean %) | failed | seeds ≤ freecdn |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const [policy, s] of Object.entries(summary)) {
    const r = s.relative_to_best_single;
    const o = s.relative_to_optimal_complete;
    lines.push(
      `| ${policy} | ${fmt(r.median)} | ${fmt(r.p90)} | ${fmt(r.worst)} | ${fmt(o.median)} | ${fmt(o.p90)} | ${fmt(o.worst)} | ${fmt(s.page_relative_to_best_single?.median)} | ` +
        `${fmt(s.extra_requests_pct.mean)} | ${fmt(s.extra_bytes_pct.mean)} | ${s.failed_requests} | ${s.share_no_worse_than_freecdn === null ? '–' : `${Math.round(s.share_no_worse_than_freecdn * 100)} %`} |`,
    );
  }
  return lines.join('\n');
}

/** The goals of issue 22 §3 that the simulator can judge, against webpp's held-out figures. */
function goalLines(webpp: PolicySummary | undefined): string[] {
  if (!webpp) return ['(no webpp rows)'];
  const check = (met: boolean): string => (met ? 'met' : '**missed**');
  const r = webpp.relative_to_best_single;
  const o = webpp.relative_to_optimal_complete;
  const vsFreecdn = webpp.share_no_worse_than_freecdn ?? 0;
  return [
    `- relative_to_best_single ≤ 1.0 at the p90 and ≤ 1.05 worst: p90 ${r.p90}, worst ${r.worst} — ${check(r.p90 <= 1 && r.worst <= 1.05)}`,
    `- relative_to_optimal_complete median ≤ 1.10 and worst ≤ 1.3: median ${o.median}, worst ${o.worst} — ${check(o.median <= 1.1 && o.worst <= 1.3)}`,
    `- better or equal to freecdn on ≥ 95 % of seeds: ${Math.round(vsFreecdn * 1000) / 10} % — ${check(vsFreecdn >= 0.95)}`,
    `- extra requests and bytes ≤ 10 % on average: ${webpp.extra_requests_pct.mean} % and ${webpp.extra_bytes_pct.mean} % — ${check(webpp.extra_requests_pct.mean <= 10 && webpp.extra_bytes_pct.mean <= 10)}`,
    `- 0 failed requests: ${webpp.failed_requests} — ${check(webpp.failed_requests === 0)}`,
  ];
}

function worstTable(worst: readonly WorstSeed[]): string {
  const lines = ['| seed | ÷ best single | ÷ optimal-complete | best single | served by | marked failed | workload | world |', '| --- | --- | --- | --- | --- | --- | --- | --- |'];
  for (const seed of worst) {
    const served = Object.entries(seed.served_by ?? {})
      .filter(([, count]) => count > 0)
      .map(([server, count]) => `${server} ${count}`)
      .join(', ');
    lines.push(`| ${seed.seed} | ${seed.relative_to_best_single} | ${seed.relative_to_optimal_complete} | ${seed.best_single} | ${served} | ${seed.marked_failed ?? '–'} | ${seed.shape}, ${seed.http} | ${seed.traits.join(', ')} |`);
  }
  return lines.join('\n');
}

export function generalizationMarkdown(document: GeneralizationDocument): string {
  const parts = [
    '# Generalization: generated worlds (simulator)',
    '',
    `Produced by \`npm run bench generalization\` (packages/simulator/bench/generalization.bench.ts) from generalization.json; generator v${document.generator_version}, ` +
      `${document.seeds_run.training} training seeds (from ${document.training_seeds.first}) and ${document.seeds_run.held_out} held-out seeds (from ${document.held_out_seeds.first}), ${document.elapsed_s} s. ` +
      'See docs/evaluation.md, "Generalization", for what the worlds hold and how the ratios are taken.',
    '',
    '## Held-out seeds',
    '',
    summaryTable(document.summary.held_out),
    '',
    '![CDF of relative_to_best_single over held-out seeds](generalization-cdf.svg)',
    '',
    '### Goals of issue 22 (webpp, held-out seeds)',
    '',
    ...goalLines(document.summary.held_out['webpp']),
    '',
    '## Training seeds',
    '',
    summaryTable(document.summary.training),
    '',
    '## Worst held-out seeds',
    '',
  ];
  for (const [policy, worst] of Object.entries(document.worst_held_out)) {
    parts.push(`### ${policy}`, '', worstTable(worst), '');
  }
  return `${parts.join('\n')}\n`;
}
