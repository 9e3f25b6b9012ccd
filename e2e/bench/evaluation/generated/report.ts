/**
 * evaluation-generated.{json,md}: the generated worlds in Chromium, summarised for training
 * and held-out worlds apart (the simulator's summarizeRows, so both suites read alike), and
 * checked against the goals of issue 22 §3.
 */
import { summarizeRows } from '@webpp/simulator';
import type { PolicySummary } from '@webpp/simulator';
import { DIRECT_PREFIX } from '../policies.js';
import type { GeneratedRow } from './rows.js';

export interface GeneratedSummary {
  training: Record<string, PolicySummary>;
  held_out: Record<string, PolicySummary>;
}

export function summarizeGenerated(rows: readonly GeneratedRow[]): GeneratedSummary {
  const policies = rows.filter((row) => !row.policy.startsWith(DIRECT_PREFIX));
  return { training: summarizeRows(policies.filter((row) => !row.held_out)), held_out: summarizeRows(policies.filter((row) => row.held_out)) };
}

export interface GoalCheck {
  goal: string;
  target: string;
  measured: string;
  met: boolean | null;
}

const fixed = (value: number | null | undefined, digits = 2): string => (value !== null && value !== undefined && Number.isFinite(value) ? value.toFixed(digits) : 'n/a');

/** Issue 22 §3's goals that the Chromium sample can judge, for `webpp` on held-out worlds. */
export function generatedGoals(summary: GeneratedSummary, policy = 'webpp'): GoalCheck[] {
  const held = summary.held_out[policy];
  if (!held) return [];
  const page = held.page_relative_to_best_single;
  return [
    { goal: 'held-out `relative_to_best_single`', target: '≤ 1.0 at the p90, ≤ 1.05 worst', measured: `p90 ${fixed(held.relative_to_best_single.p90)}, worst ${fixed(held.relative_to_best_single.worst)}`, met: held.relative_to_best_single.p90 <= 1 && held.relative_to_best_single.worst <= 1.05 },
    { goal: 'held-out `relative_to_optimal_complete`', target: 'median ≤ 1.10, worst ≤ 1.3', measured: `median ${fixed(held.relative_to_optimal_complete.median)}, worst ${fixed(held.relative_to_optimal_complete.worst)}`, met: held.relative_to_optimal_complete.median <= 1.1 && held.relative_to_optimal_complete.worst <= 1.3 },
    { goal: 'against freecdn', target: 'better or equal on ≥ 95 % of held-out worlds', measured: held.share_no_worse_than_freecdn === null ? 'n/a' : `${fixed(held.share_no_worse_than_freecdn * 100, 0)} %`, met: held.share_no_worse_than_freecdn === null ? null : held.share_no_worse_than_freecdn >= 0.95 },
    { goal: 'page-shaped worlds, page time ÷ best single', target: '(≤ 0.85 where two or more fat replicas)', measured: page ? `median ${fixed(page.median)}, worst ${fixed(page.worst)} (all page-shaped held-out worlds)` : 'n/a', met: null },
    { goal: 'extra requests, extra bytes', target: '≤ 10 % on average', measured: `${fixed(held.extra_requests_pct.mean, 1)} %, ${fixed(held.extra_bytes_pct.mean, 1)} %`, met: held.extra_requests_pct.mean <= 10 && held.extra_bytes_pct.mean <= 10 },
    { goal: 'failed requests', target: '0', measured: String(held.failed_requests), met: held.failed_requests === 0 },
  ];
}

export function goalsTable(checks: readonly GoalCheck[]): string[] {
  return ['| goal (webpp, held-out worlds in Chromium) | target | measured | met? |', '|---|---|---|---|', ...checks.map((check) => `| ${check.goal} | ${check.target} | ${check.measured} | ${check.met === null ? 'not judged' : check.met ? 'met' : '**missed**'} |`)];
}

/** One line per world: the best single, and each policy's ratio to it (medians over the runs). */
export function worldsTable(rows: readonly GeneratedRow[]): string[] {
  const policies = ['webpp', 'webpp-paper', 'freecdn', 'optimal-complete'].filter((policy) => rows.some((row) => row.policy === policy));
  const seeds = [...new Set(rows.map((row) => row.seed))];
  const out = [
    `| world | held out | stratum | best single (mean ms) | ${policies.map((policy) => `${policy} ÷best single / ÷optimal-complete / failed`).join(' | ')} |`,
    `|---|---|---|---|${policies.map(() => '---').join('|')}|`,
  ];
  for (const seed of seeds) {
    const mine = rows.filter((row) => row.seed === seed);
    const first = mine[0]!;
    const best = mine.find((row) => row.policy === first.best_single);
    const cells = policies.map((policy) => {
      const row = mine.find((candidate) => candidate.policy === policy);
      return row ? `${fixed(row.relative_to_best_single)} / ${fixed(row.relative_to_optimal_complete)} / ${row.failed_requests}` : '–';
    });
    out.push(`| ${seed} | ${first.held_out ? 'yes' : 'no'} | ${first.stratum} | ${first.best_single ?? '–'} (${fixed(best?.mean_ms, 0)}) | ${cells.join(' | ')} |`);
  }
  return out;
}

export function generatedMarkdown(rows: readonly GeneratedRow[], summary: GeneratedSummary, info: { command: string; runs: number; engine: string; chromium: string; wallSeconds: number }): string {
  const summaryLines = (label: string, set: Record<string, PolicySummary>): string[] => [
    `| ${label} | worlds | ÷best single median / p90 / worst | ÷optimal-complete median / worst | ≤ freecdn | extra requests / bytes (mean) | failed |`,
    '|---|---|---|---|---|---|---|',
    ...Object.entries(set).map(
      ([policy, s]) =>
        `| ${policy} | ${s.seeds} | ${fixed(s.relative_to_best_single.median)} / ${fixed(s.relative_to_best_single.p90)} / ${fixed(s.relative_to_best_single.worst)} | ${fixed(s.relative_to_optimal_complete.median)} / ${fixed(s.relative_to_optimal_complete.worst)} | ${s.share_no_worse_than_freecdn === null ? '–' : `${fixed(s.share_no_worse_than_freecdn * 100, 0)} %`} | ${fixed(s.extra_requests_pct.mean, 1)} % / ${fixed(s.extra_bytes_pct.mean, 1)} % | ${s.failed_requests} |`,
    ),
  ];
  return [
    '# Generated worlds in Chromium (issue 22)',
    '',
    `\`${info.command}\` — ${info.runs} run(s), engine: ${info.engine}, Chromium ${info.chromium}, ${Math.round(info.wallSeconds)} s. Figures are medians over the runs.`,
    '',
    ...summaryLines('held-out policy', summary.held_out),
    '',
    ...summaryLines('training policy', summary.training),
    '',
    ...goalsTable(generatedGoals(summary)),
    '',
    ...worldsTable(rows),
    '',
  ].join('\n');
}
