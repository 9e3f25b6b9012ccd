/**
 * docs/benchmarks/results.md: how the run was made, one table per scenario (medians over runs
 * with their ranges), the goals of issue 11, and the browser/simulator agreement.
 */
import { policyCellsMarkdown, readmeSummaryMarkdown } from './docs-tables.js';
import { AGREEMENT_TOLERANCE } from './agreement.js';
import { agreementRows, goalsMarkdown, withinTenPercent } from './goals.js';
import type { ResultRow } from './rows.js';

export interface RunInfo {
  /** One entry per bench run. */
  runs: { startedAt: string; wallSeconds: number; loadAverage: string; agreeing: number; compared: number; missingDecisions: number }[];
  command: string;
  /** The checkout measured (engine-label.ts); absent in runs before issue 22. */
  engine?: string;
  clients: number;
  maxRequestsPerClient: number;
  chromium: string;
  /** Per scenario: its time scale, its length in the bench, and the file sizes of its workload. */
  scenarios: Record<string, { timeScale: number; seconds: number; fileSizesBytes: readonly number[] }>;
  /** Per scenario, median over runs: the browser's per-request time beyond the emulated link. */
  overheadMs: Record<string, { medianMs: number; samples: number }>;
  /** Per scenario, median over runs: the simulator's seed-to-seed spread of the ratio (median over policies). */
  seedSpread: Record<string, number>;
  simulatorSeeds: readonly (string | number)[];
  untaggedRequests: Record<string, number>;
}

const fmt = (value: number, digits = 3): string => (Number.isFinite(value) ? value.toFixed(digits) : 'n/a');
/** "1.234" or, with several runs, "1.234 (1.200–1.260)". */
function cell(row: ResultRow, field: keyof NonNullable<ResultRow['range']>, digits = 3): string {
  const value = row[field] as number;
  const range = row.range?.[field];
  if (!range || row.runs < 2) return fmt(value, digits);
  return `${fmt(value, digits)} (${fmt(range[0], digits)}–${fmt(range[1], digits)})`;
}
const sizes = (bytes: readonly number[]): string => bytes.map((b) => `${b / 1024} KB`).join(', ');

export function resultsMarkdown(rows: readonly ResultRow[], scenarios: readonly string[], info: RunInfo, descriptions: Record<string, string>): string {
  const runs = info.runs.length;
  const out: string[] = [];
  out.push('# Evaluation in real Chromium: replica-selection policies on emulated networks');
  out.push('');
  const when = info.runs.map((run, i) => `run ${i + 1}: ${run.startedAt}, ${Math.round(run.wallSeconds)} s, load average at the start ${run.loadAverage}`);
  out.push(`Produced by \`${info.command}\` (e2e/bench/evaluation.bench.ts), ${runs} run${runs === 1 ? '' : 's'} (${when.join('; ')}). Chromium ${info.chromium}, 2 cores shared with other jobs.`);
  out.push(
    runs > 1
      ? `Every figure is the **median over the ${runs} runs**, with the range (min–max) in brackets; \`results.json\` has the medians and a \`range\` per row, \`results-runs.json\` every run's rows.`
      : 'One run: no ranges.',
  );
  out.push('');
  out.push(
    `Each scenario is compressed in time (\`scaleScenarioTime\`: schedules, outages and the duration scale; delays and bandwidths do not) to the length given below. ` +
      `${info.clients} client${info.clients === 1 ? '' : 's'} per policy send GETs back to back (paper Section 6.1), cycling through the scenario's file sizes, for the whole scenario ` +
      `(at most ${info.maxRequestsPerClient} per client). All policies run at the same time, one Chromium browser context each (own Service Worker, IndexedDB and connections), ` +
      'started at the same scenario instant, so they meet the same network.',
  );
  out.push('');
  out.push(
    'Response time is measured in the page, from `fetch()` to the body fully read, over successful requests. **Every ratio is against `optimal-complete`** ' +
      '(every replica at once, the first complete body wins: the paper\'s optimal, Section 6.1); `÷ worker optimal` is against the worker\'s `optimal` ' +
      '(the first response *head* wins, the weaker baseline issue 7 used). Extra requests = every HTTP request the worker sent beyond one per page request: ' +
      'each decision\'s attempts (failovers, hedges), refreshes, probes and body resumes, from its live events, or the emulators\' count when that is higher ' +
      '(the events miss background requests still in flight when they are read; the emulators miss connections refused in an outage); `servers` is the emulators\' own count. Failed = `fetch()` rejected, non-2xx, short body, or no complete response within 30 s. ' +
      'A run in which any page request had no decision event fails (`missing_decisions`).',
  );
  out.push('');
  out.push('Policies:');
  out.push('');
  for (const [name, description] of Object.entries(descriptions)) out.push(`- \`${name}\`: ${description}`);
  out.push('');
  out.push('## Goals of issue 11');
  out.push('');
  out.push(runs > 1 ? 'A goal is met only when it is met in every run (the worst end of the range).' : 'From one run.');
  out.push('');
  out.push(...goalsMarkdown(rows));
  out.push('');
  out.push('## Tables of docs/evaluation.md and the README');
  out.push('');
  out.push('`npm run docs:evaluation` writes these from results.json into docs/evaluation.md ("Results of issue 11") and the README.');
  out.push('');
  out.push(...policyCellsMarkdown(rows, scenarios));
  out.push('');
  out.push('README:');
  out.push('');
  out.push(...readmeSummaryMarkdown(rows));
  out.push('');
  for (const scenario of scenarios) {
    const mine = rows.filter((candidate) => candidate.scenario === scenario);
    if (mine.length === 0) continue;
    const shape = info.scenarios[scenario];
    out.push(`## ${scenario}`);
    out.push('');
    if (shape) out.push(`${shape.seconds} s (time scale ${shape.timeScale}); files ${sizes(shape.fileSizesBytes)}.`);
    out.push('');
    out.push('| policy | requests | mean ms | p95 ms | ÷ optimal (mean) | ÷ optimal (p95) | ÷ worker optimal | extra requests % (servers) | failed | better than mean single | best-server share | simulator ÷ optimal | agrees (± tolerance) |');
    out.push('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |');
    for (const row of mine) {
      const agrees = row.policy === 'optimal' || row.policy === 'optimal-complete' ? 'baseline' : `${row.agrees_relative_to_optimal ? 'yes' : '**no**'} (±${fmt(row.agreement_tolerance)})`;
      out.push(
        `| ${row.policy} | ${cell(row, 'requests', 0)} | ${cell(row, 'mean_ms', 1)} | ${cell(row, 'p95_ms', 1)} | ${cell(row, 'relative_to_optimal')} | ${cell(row, 'relative_p95_to_optimal')} | ` +
          `${cell(row, 'relative_to_worker_optimal')} | ${cell(row, 'extra_requests_pct', 2)} (${fmt(row.extra_requests_pct_server, 2)}) | ${cell(row, 'failed_requests', 0)} | ` +
          `${fmt(row.better_than_mean_single * 100, 1)}% | ${row.best_server_share === null ? '–' : fmt(row.best_server_share, 2)} / sim ${fmt(row.sim_best_server_share, 2)} | ` +
          `${fmt(row.sim_relative_to_optimal)} (${row.sim_relative_to_optimal_range.map((value) => fmt(value)).join('–')}) | ${agrees} |`,
      );
    }
    out.push('');
    const overhead = info.overheadMs[scenario];
    if (overhead) {
      out.push(`Per-request time beyond the emulated link (worker, origin, Chromium; median of ${overhead.samples} requests of the single-server policies): ${overhead.medianMs.toFixed(1)} ms, replayed by the simulator as its client delay at the same scenario times (each exchange gets the nearest request's; @webpp/simulator client-delay.ts).`);
    }
    const spread = mine[0]!.scenario_spread;
    out.push(
      `Spread of the simulated ratios over the policies: ${fmt(spread)}; the simulator's seed-to-seed spread (median over policies): ${fmt(info.seedSpread[scenario] ?? Number.NaN)}; ` +
        `so this scenario's tolerance is ± max(${AGREEMENT_TOLERANCE.ratioFloor}, min(10% of the simulated ratio, ${fmt(spread)} ÷ ${AGREEMENT_TOLERANCE.ratioSpreadDivisor})).`,
    );
    out.push('');
  }
  out.push(...agreementSection(rows, info));
  out.push('');
  out.push(`Requests without a policy tag (page loads, scripts, setup) seen by the emulators: ${Object.entries(info.untaggedRequests).map(([s, n]) => `${s} ${n}`).join(', ')}.`);
  out.push('');
  out.push('Plots: [mean ÷ optimal](relative-to-optimal.svg), [p95 ÷ optimal](relative-p95-to-optimal.svg), [browser vs simulator](browser-vs-simulator.svg).');
  out.push('');
  return out.join('\n');
}

function agreementSection(rows: readonly ResultRow[], info: RunInfo): string[] {
  const out: string[] = [];
  const compared = agreementRows(rows);
  out.push('## Browser vs simulator');
  out.push('');
  out.push(
    `The simulator (packages/simulator, the same @webpp/core code) ran the same compressed scenarios, workload and policies with five seeds each (the scenario's own and ${info.simulatorSeeds.slice(1).join(', ')}). ` +
      'The rows of `optimal` and `optimal-complete` are left out of the count: `optimal-complete` is the baseline (1 on both sides by construction) and `optimal` is a second baseline, not a policy under test. ' +
      `A row agrees when |browser − simulator| ≤ the scenario's tolerance: ± max(${AGREEMENT_TOLERANCE.ratioFloor}, min(10% of the simulated ratio, the spread of the scenario's policies ÷ ${AGREEMENT_TOLERANCE.ratioSpreadDivisor})) ` +
      '(agreement.ts says why); the issue\'s goal counts rows within ±10%. Extra requests are compared within max(1.5 points, 25%), failed requests as zero / non-zero.',
  );
  out.push('');
  out.push(
    `On the medians: ${compared.filter(withinTenPercent).length} of ${compared.length} rows within ±10%; ${compared.filter((row) => row.agrees_relative_to_optimal).length} within the scenario's tolerance ` +
      `(${compared.filter((row) => row.agrees_relative_to_optimal || row.within_sim_seed_range).length} when a browser ratio inside the simulator's seed range also counts); ` +
      `${compared.filter((row) => row.agrees_extra_requests).length} on extra requests; ${compared.filter((row) => row.agrees_failed_requests).length} on failed requests.`,
  );
  if (info.runs.length > 1) out.push(`Per run, within the scenario's tolerance: ${info.runs.map((run) => `${run.agreeing} of ${run.compared}`).join(', ')}.`);
  const disagreeing = compared.filter((row) => !row.agrees_relative_to_optimal || !row.agrees_extra_requests || !row.agrees_failed_requests);
  if (disagreeing.length > 0) {
    out.push('');
    out.push('| scenario | policy | ÷ optimal browser / simulator (seed range) ± tolerance | extra % browser / simulator | failed browser / simulator | best-server share browser / simulator | worker TTFB beyond the link, median / p95 ms (single-server policies) |');
    out.push('| --- | --- | --- | --- | --- | --- | --- |');
    const mark = (ok: boolean, text: string): string => (ok ? text : `**${text}**`);
    for (const row of disagreeing) {
      out.push(
        `| ${row.scenario} | ${row.policy} | ${mark(row.agrees_relative_to_optimal, `${fmt(row.relative_to_optimal)} / ${fmt(row.sim_relative_to_optimal)}`)} ` +
          `(${row.sim_relative_to_optimal_range.map((value) => fmt(value)).join('–')}) ±${fmt(row.agreement_tolerance)} | ` +
          `${mark(row.agrees_extra_requests, `${row.extra_requests_pct} / ${row.sim_extra_requests_pct}`)} | ${mark(row.agrees_failed_requests, `${row.failed_requests} / ${row.sim_failed_requests}`)} | ` +
          `${row.best_server_share === null ? '–' : fmt(row.best_server_share, 2)} / ${fmt(row.sim_best_server_share, 2)} | ` +
          `${row.ttfb_beyond_link_ms ? `${row.ttfb_beyond_link_ms.medianMs} / ${row.ttfb_beyond_link_ms.p95Ms}` : '–'} |`,
      );
    }
  }
  return out;
}
