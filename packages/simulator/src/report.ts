/** Markdown renderings of comparisons and sweeps, for docs/benchmarks/. */
import { improvementOverSingle, round, type ScenarioComparison } from './compare.js';
import type { SweepResult, SweepRow } from './sweep.js';

function table(header: string[], rows: Array<Array<string | number>>): string {
  const line = (cells: Array<string | number>): string => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

function pct(value: number, digits = 1): string {
  return Number.isFinite(value) ? `${(value * 100).toFixed(digits)}%` : 'n/a';
}

function num(value: number): string {
  return Number.isFinite(value) ? String(value) : 'n/a';
}

/** The goals of issue 7, checked against one policy's simulated rows. */
export function goalLines(comparisons: readonly ScenarioComparison[], policy: string): string[] {
  const lines: string[] = [];
  for (const comparison of comparisons) {
    const row = comparison.rows.find((candidate) => candidate.policy === policy);
    if (!row) continue;
    const within = row.relative_to_optimal <= 1.05;
    const extra = row.extra_requests_pct < 3;
    lines.push(
      `- ${comparison.scenario}: mean ${num(row.relative_to_optimal)}× optimal (${within ? 'within' : 'NOT within'} 5%), ` +
        `${row.extra_requests_pct}% extra requests (${extra ? 'under' : 'NOT under'} 3%), ${row.failed_requests} failed requests`,
    );
    if (comparison.scenario === 'peak') {
      const gain = improvementOverSingle(comparison.results, policy);
      if (gain) lines.push(`  - peak: ${pct(gain.vsMeanSingle)} better than the mean single server (goal: at least 45%)`);
    }
  }
  return lines;
}

export interface ComparisonReportOptions {
  title?: string;
  /** Free text under the title (how it was produced). */
  preamble?: string;
  /** Policies whose goals are listed. Default webpp-paper and webpp-fast. */
  goalPolicies?: string[];
}

export function comparisonMarkdown(comparisons: readonly ScenarioComparison[], options: ComparisonReportOptions = {}): string {
  const parts: string[] = [`# ${options.title ?? 'Simulated policy comparison'}`];
  if (options.preamble) parts.push(options.preamble);
  for (const comparison of comparisons) {
    parts.push(`## ${comparison.scenario}`);
    parts.push(
      table(
        ['policy', 'mean ms', 'median ms', 'p95 ms', 'mean / optimal', 'median / optimal', 'extra requests %', 'failed', 'requests', 'served by best replica'],
        comparison.rows.map((row) => [
          row.policy,
          num(row.mean_ms),
          num(row.median_ms),
          num(row.p95_ms),
          num(row.relative_to_optimal),
          num(row.relative_median_to_optimal),
          row.extra_requests_pct,
          row.failed_requests,
          row.requests,
          pct(row.best_server_share, 0),
        ]),
      ),
    );
    const gains = ['webpp-paper', 'webpp-fast', 'hedged']
      .map((policy) => ({ policy, gain: improvementOverSingle(comparison.results, policy) }))
      .filter((entry) => entry.gain !== undefined);
    if (gains.length > 0) {
      parts.push(
        table(
          ['policy', 'better than mean single server', 'avg over servers', 'min over servers', 'max over servers'],
          gains.map(({ policy, gain }) => [policy, pct(gain!.vsMeanSingle), pct(gain!.averageOverServers), pct(gain!.minOverServers), pct(gain!.maxOverServers)]),
        ),
      );
    }
  }
  for (const policy of options.goalPolicies ?? ['webpp-paper', 'webpp-fast']) {
    const lines = goalLines(comparisons, policy);
    if (lines.length > 0) parts.push(`### Goals — ${policy}\n${lines.join('\n')}`);
  }
  return `${parts.join('\n\n')}\n`;
}

const PARAMETER_TITLES: Record<string, string> = {
  ewmaWeight: 'r — EWMA weight of the newest sample, eq. (2)–(3) (paper Figure 5)',
  ttlMs: 'TTL — entry lifetime before an asynchronous refresh (paper Figure 6)',
  selectPercentile: 'S — percentile minimised by selection, eq. (1)',
  timeoutPercentile: 'T — percentile used as the request timeout',
  timeoutFloorMs: 'timeout floor — lower bound on any timeout (ours, not the paper\'s)',
  timeoutMeanMultiple: 'timeout mean multiple — a timeout is at least this many times the mean latency (ours)',
  probeIntervalMs: 'F — first re-probe interval of a failed server',
  clients: 'clients — sharing one latency table (shared) or each with its own (private)',
};

function formatValue(parameter: string, row: SweepRow): string {
  if (parameter === 'ttlMs' || parameter === 'probeIntervalMs' || parameter === 'timeoutFloorMs') {
    const ms = row.value ?? 0;
    if (ms >= 3_600_000) return `${round(ms / 3_600_000, 1)} h`;
    if (ms >= 60_000) return `${round(ms / 60_000, 1)} min`;
    return `${round(ms / 1000, 1)} s`;
  }
  if (parameter === 'clients') return `${row.value} ${row.shared_table ? 'shared' : 'private'}`;
  return String(row.value);
}

export function sweepMarkdown(result: SweepResult, preamble?: string): string {
  const parts: string[] = ['# Parameter sweep of the extended Refresh algorithm (simulated)'];
  if (preamble) parts.push(preamble);
  parts.push(
    `${result.runs} simulated runs, ${result.requestsSimulated} HTTP requests, in ${(result.elapsedMs / 1000).toFixed(1)} s. ` +
      'Each cell: mean response time ÷ optimal\'s / extra requests % / failed requests. ' +
      'One parameter varies at a time; the others keep the base configuration\'s values.',
  );
  const scenarios = [...new Set(result.rows.map((row) => row.scenario))];
  const bases = [...new Set(result.rows.map((row) => row.base))];
  for (const base of bases) {
    const baseline = scenarios.map((scenario) => result.rows.find((row) => row.base === base && row.scenario === scenario && row.parameter === 'baseline'));
    parts.push(`## Base: ${base}`);
    const first = baseline.find(Boolean);
    if (first) {
      parts.push(
        `r = ${first.r}, TTL = ${first.ttl_ms} ms, F = ${first.f_ms} ms, S = ${first.s}, T = ${first.t}, timeout floor = ${first.timeout_floor_ms} ms, ` +
          `timeout ≥ ${first.timeout_mean_multiple} × mean, ` +
          `${first.clients} clients sharing one table; ${first.seeds} seed(s) per cell (failed requests summed over them).`,
      );
    }
    parts.push(
      table(
        ['', ...scenarios],
        [['baseline', ...baseline.map((row) => (row ? `${row.relative_to_optimal} / ${row.extra_requests_pct}% / ${row.failed_requests}` : ''))]],
      ),
    );
    for (const parameter of [...new Set(result.rows.filter((row) => row.base === base).map((row) => row.parameter))]) {
      if (parameter === 'baseline') continue;
      const ofParameter = result.rows.filter((row) => row.base === base && row.parameter === parameter);
      const keys = [...new Set(ofParameter.map((row) => `${row.value}|${row.shared_table}`))];
      const showError = parameter === 'ewmaWeight';
      parts.push(`### ${PARAMETER_TITLES[parameter] ?? parameter}`);
      parts.push(
        table(
          [parameter === 'grid' ? 'r, TTL, S, T' : 'value', ...scenarios, ...(showError ? ['prediction error (mean over scenarios)'] : [])],
          keys.map((key) => {
            const cells = scenarios.map((scenario) => ofParameter.find((row) => row.scenario === scenario && `${row.value}|${row.shared_table}` === key));
            const any = cells.find(Boolean)!;
            const label = parameter === 'grid' ? `${any.r}, ${any.ttl_ms}, ${any.s}, ${any.t}` : formatValue(parameter, any);
            const errors = cells.map((row) => row?.prediction_error).filter((value): value is number => typeof value === 'number');
            return [
              label,
              ...cells.map((row) => (row ? `${row.relative_to_optimal} / ${row.extra_requests_pct}% / ${row.failed_requests}` : '')),
              ...(showError ? [errors.length ? round(errors.reduce((a, b) => a + b, 0) / errors.length, 3) : 'n/a'] : []),
            ];
          }),
        ),
      );
    }
  }
  return `${parts.join('\n\n')}\n`;
}
