/**
 * The evaluation's outputs: rows of docs/benchmarks/results.json, the markdown table, the
 * goals of issue 7 checked against the data, and SVG plots (the paper's Figures 12 and 14:
 * response time relative to optimal, per policy; and browser vs simulator).
 */
import type { Agreement, SimulatedPolicy } from './agreement.js';
import type { PolicyMeasurement } from './metrics.js';
import { round } from './metrics.js';
import { WEBPP_POLICY_NAMES } from './policies.js';

/** One row of results.json: the issue's eight fields first, then extras. */
export interface ResultRow {
  scenario: string;
  policy: string;
  mean_ms: number;
  median_ms: number;
  p95_ms: number;
  relative_to_optimal: number;
  extra_requests_pct: number;
  failed_requests: number;
  source: 'browser';
  requests: number;
  relative_median_to_optimal: number;
  relative_to_optimal_complete: number;
  extra_requests_pct_server: number;
  refreshes: number;
  probes: number;
  resumes: number;
  served_by: Record<string, number>;
  attempt_outcomes: Record<string, number>;
  failed_attempts_by_server: Record<string, number>;
  ttfb_beyond_link_ms: PolicyMeasurement['ttfbBeyondLinkMs'];
  best_server_share: number | null;
  failure_reasons: Record<string, number>;
  by_size: PolicyMeasurement['bySize'];
  time_scale: number;
  sim_mean_ms: number;
  sim_relative_to_optimal: number;
  sim_relative_to_optimal_range: [number, number];
  sim_extra_requests_pct: number;
  sim_failed_requests: number;
  sim_best_server_share: number;
  agrees_relative_to_optimal: boolean;
  within_sim_seed_range: boolean;
  agrees_extra_requests: boolean;
  agrees_failed_requests: boolean;
}

export function resultRows(
  measurements: readonly PolicyMeasurement[],
  simulated: readonly SimulatedPolicy[],
  agreements: ReadonlyMap<string, Agreement>,
  timeScale: number,
): ResultRow[] {
  const optimal = measurements.find((m) => m.policy === 'optimal');
  const complete = measurements.find((m) => m.policy === 'optimal-complete');
  return measurements.map((m) => {
    const sim = simulated.find((s) => s.policy === m.policy)!;
    const agree = agreements.get(m.policy)!;
    return {
      scenario: m.scenario,
      policy: m.policy,
      mean_ms: round(m.meanMs),
      median_ms: round(m.medianMs),
      p95_ms: round(m.p95Ms),
      relative_to_optimal: optimal ? round(m.meanMs / optimal.meanMs, 3) : Number.NaN,
      extra_requests_pct: round(m.extraRequestsPct, 2),
      failed_requests: m.failed,
      source: 'browser',
      requests: m.requests,
      relative_median_to_optimal: optimal ? round(m.medianMs / optimal.medianMs, 3) : Number.NaN,
      relative_to_optimal_complete: complete ? round(m.meanMs / complete.meanMs, 3) : Number.NaN,
      extra_requests_pct_server: round(m.extraRequestsPctServer, 2),
      refreshes: m.refreshes,
      probes: m.probes,
      resumes: m.resumes,
      served_by: m.servedBy,
      attempt_outcomes: m.attemptOutcomes,
      failed_attempts_by_server: m.failedAttemptsByServer,
      ttfb_beyond_link_ms: m.ttfbBeyondLinkMs,
      best_server_share: m.bestServerShare === null ? null : round(m.bestServerShare, 3),
      failure_reasons: m.failureReasons,
      by_size: m.bySize,
      time_scale: timeScale,
      sim_mean_ms: round(sim.meanMs),
      sim_relative_to_optimal: round(sim.relativeToOptimal, 3),
      sim_relative_to_optimal_range: [round(sim.relativeMin, 3), round(sim.relativeMax, 3)],
      sim_extra_requests_pct: round(sim.extraRequestsPct, 2),
      sim_failed_requests: round(sim.failedRequests, 1),
      sim_best_server_share: round(sim.bestServerShare, 3),
      agrees_relative_to_optimal: agree.ratio,
      within_sim_seed_range: agree.ratioWithinSeedRange,
      agrees_extra_requests: agree.extra,
      agrees_failed_requests: agree.failed,
    };
  });
}

/** 1 − policy mean ÷ mean of the single servers' means (paper Section 6.2's "improvement"). */
function improvementOverSingles(rows: readonly ResultRow[], scenario: string, policy: string): number {
  const singles = rows.filter((row) => row.scenario === scenario && row.policy.startsWith('single-'));
  const target = rows.find((row) => row.scenario === scenario && row.policy === policy);
  if (!target || singles.length === 0) return Number.NaN;
  const meanSingle = singles.reduce((sum, row) => sum + row.mean_ms, 0) / singles.length;
  return 1 - target.mean_ms / meanSingle;
}

const pct = (value: number): string => (Number.isFinite(value) ? `${(value * 100).toFixed(1)}%` : 'n/a');
const yes = (value: boolean): string => (value ? 'yes' : '**no**');

export function goalLines(rows: readonly ResultRow[], scenarios: readonly string[]): string[] {
  const lines: string[] = [];
  for (const policy of WEBPP_POLICY_NAMES) {
    const mine = rows.filter((row) => row.policy === policy);
    if (mine.length === 0) continue;
    const within = scenarios.map((scenario) => {
      const row = mine.find((candidate) => candidate.scenario === scenario);
      return row ? `${scenario} ${row.relative_to_optimal.toFixed(3)} / ${row.extra_requests_pct}%` : `${scenario} n/a`;
    });
    const met = mine.every((row) => row.relative_to_optimal <= 1.05 && row.extra_requests_pct < 3);
    lines.push(`- **${policy}** within 5% of optimal with < 3% extra requests in every scenario: ${yes(met)} (${within.join('; ')})`);
  }
  if (scenarios.includes('peak')) {
    for (const policy of WEBPP_POLICY_NAMES) {
      const gain = improvementOverSingles(rows, 'peak', policy);
      if (Number.isFinite(gain)) lines.push(`- **${policy}** ≥ 45% better than the mean single server in peak: ${yes(gain >= 0.45)} (${pct(gain)}; optimal ${pct(improvementOverSingles(rows, 'peak', 'optimal'))})`);
    }
  }
  if (scenarios.includes('outage')) {
    for (const policy of WEBPP_POLICY_NAMES) {
      const row = rows.find((candidate) => candidate.scenario === 'outage' && candidate.policy === policy);
      if (row) lines.push(`- **${policy}** zero failed requests in outage: ${yes(row.failed_requests === 0)} (${row.failed_requests} of ${row.requests}${row.failed_requests > 0 ? `: ${JSON.stringify(row.failure_reasons)}` : ''})`);
    }
  }
  return lines;
}

export interface RunInfo {
  command: string;
  startedAt: string;
  wallSeconds: number;
  timeScale: number;
  scenarioSeconds: number;
  clients: number;
  fileSizesBytes: readonly number[];
  maxRequestsPerClient: number;
  chromium: string;
  loadAverage: string;
  overheadMs: Record<string, { medianMs: number; samples: number }>;
  simulatorSeeds: readonly (string | number)[];
  untaggedRequests: Record<string, number>;
}

export function resultsMarkdown(rows: readonly ResultRow[], scenarios: readonly string[], info: RunInfo, descriptions: Record<string, string>): string {
  const out: string[] = [];
  out.push('# Evaluation in real Chromium: replica-selection policies on emulated networks');
  out.push('');
  out.push(`Produced by \`${info.command}\` (e2e/bench/evaluation.bench.ts) on ${info.startedAt}, in ${Math.round(info.wallSeconds)} s of wall time.`);
  out.push(
    `Every scenario of packages/netem/scenarios was compressed in time by ${info.timeScale} (\`scaleScenarioTime\`: schedules, outages and the ` +
      `duration scale; delays and bandwidths do not), so each runs ${info.scenarioSeconds} s instead of 300 s. ${info.clients} client${info.clients === 1 ? '' : 's'} per policy ` +
      `send${info.clients === 1 ? 's' : ''} GETs back to back (paper Section 6.1) for ${info.fileSizesBytes.map((b) => `${b / 1024} KB`).join(', ')} files in turn, for the whole ` +
      `scenario (at most ${info.maxRequestsPerClient} per client; the paper had 3 clients × 500 GETs per file size, see docs/evaluation.md for why fewer here). All policies run ` +
      'at the same time, one Chromium browser context each (own Service Worker, IndexedDB and connections), started at the same scenario ' +
      `instant, so they meet the same network. Chromium ${info.chromium}; load average at the start ${info.loadAverage} (2 cores, shared).`,
  );
  out.push('');
  out.push('Response time is measured in the page, from `fetch()` to the body fully read, over successful requests. ' +
    '`relative_to_optimal` = mean ÷ the worker-`optimal` mean of the same scenario (the paper\'s Figures 12/14 plot the median ratio, ' +
    'in `results.json` as `relative_median_to_optimal`). Extra requests = HTTP requests the worker sent (every attempt, refresh, probe and body resume, ' +
    'from its live decision events) beyond one per page request; the emulators\' own count is `extra_requests_pct_server` ' +
    '(refused connections never reach them). Failed = `fetch()` rejected, non-2xx, short body, or no complete response within 30 s.');
  out.push('');
  out.push('Policies:');
  out.push('');
  for (const [name, description] of Object.entries(descriptions)) out.push(`- \`${name}\`: ${description}`);
  out.push('');
  for (const scenario of scenarios) {
    out.push(`## ${scenario}`);
    out.push('');
    out.push('| policy | requests | mean ms | median ms | p95 ms | ÷ optimal (mean) | ÷ optimal (median) | extra requests % (worker / servers) | failed | best-server share (browser / sim) | simulator ÷ optimal (seed range) | agrees |');
    out.push('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |');
    for (const row of rows.filter((candidate) => candidate.scenario === scenario)) {
      const [low, high] = row.sim_relative_to_optimal_range;
      out.push(
        `| ${row.policy} | ${row.requests} | ${row.mean_ms} | ${row.median_ms} | ${row.p95_ms} | ${row.relative_to_optimal.toFixed(3)} | ` +
          `${row.relative_median_to_optimal.toFixed(3)} | ${row.extra_requests_pct} / ${row.extra_requests_pct_server} | ${row.failed_requests} | ` +
          `${row.best_server_share === null ? '–' : row.best_server_share.toFixed(2)} / ${row.sim_best_server_share.toFixed(2)} | ` +
          `${row.sim_relative_to_optimal.toFixed(3)} (${low.toFixed(3)}–${high.toFixed(3)}) | ${row.agrees_relative_to_optimal ? 'yes' : row.within_sim_seed_range ? 'no (in seed range)' : 'no'} |`,
      );
    }
    out.push('');
    const gains = WEBPP_POLICY_NAMES.map((policy) => `${policy} ${pct(improvementOverSingles(rows, scenario, policy))}`);
    out.push(`Better than the mean single server: ${gains.join(', ')}, optimal ${pct(improvementOverSingles(rows, scenario, 'optimal'))}.`);
    const overhead = info.overheadMs[scenario];
    if (overhead) {
      out.push(`Per-request time beyond the emulated link (worker, origin, Chromium; median of ${overhead.samples} single-attempt requests): ${overhead.medianMs.toFixed(1)} ms, given to the simulator as \`serviceMs\`.`);
    }
    out.push('');
  }
  out.push('## Goals of issue 7');
  out.push('');
  out.push(...goalLines(rows, scenarios));
  out.push('');
  out.push('## Browser vs simulator');
  out.push('');
  out.push(
    `The simulator (packages/simulator, the same @webpp/core code) ran the same compressed scenarios, workload and policies with seeds ${info.simulatorSeeds.join(', ')}; ` +
      'its `optimal` is the worker\'s (first response head wins) and `optimal-complete` is its own (first complete body). ' +
      'A row agrees when |browser − simulator| ≤ max(0.10, 10% of the simulator\'s value) for `relative_to_optimal`; ' +
      'extra requests are compared within max(1.5 points, 25%), failed requests as zero / non-zero.',
  );
  out.push('');
  const agreeing = rows.filter((row) => row.agrees_relative_to_optimal).length;
  out.push(`${agreeing} of ${rows.length} rows agree on relative_to_optimal (${rows.filter((row) => row.agrees_relative_to_optimal || row.within_sim_seed_range).length} when a browser ratio inside the simulator's seed range also counts); ${rows.filter((row) => row.agrees_extra_requests).length} on extra requests; ${rows.filter((row) => row.agrees_failed_requests).length} on failed requests (zero / non-zero).`);
  const disagreeing = rows.filter((row) => !row.agrees_relative_to_optimal || !row.agrees_extra_requests || !row.agrees_failed_requests);
  if (disagreeing.length > 0) {
    out.push('');
    out.push('| scenario | policy | ÷ optimal browser / simulator (seed range) | extra % browser / simulator | failed browser / simulator | best-server share browser / simulator | worker TTFB beyond the link, median / p95 ms |');
    out.push('| --- | --- | --- | --- | --- | --- | --- |');
    for (const row of disagreeing) {
      const mark = (ok: boolean, text: string): string => (ok ? text : `**${text}**`);
      out.push(
        `| ${row.scenario} | ${row.policy} | ${mark(row.agrees_relative_to_optimal, `${row.relative_to_optimal.toFixed(3)} / ${row.sim_relative_to_optimal.toFixed(3)}`)} ` +
          `(${row.sim_relative_to_optimal_range.map((value) => value.toFixed(3)).join('–')}) | ` +
          `${mark(row.agrees_extra_requests, `${row.extra_requests_pct} / ${row.sim_extra_requests_pct}`)} | ${mark(row.agrees_failed_requests, `${row.failed_requests} / ${row.sim_failed_requests}`)} | ` +
          `${row.best_server_share === null ? '–' : row.best_server_share.toFixed(2)} / ${row.sim_best_server_share.toFixed(2)} | ` +
          `${row.ttfb_beyond_link_ms ? `${row.ttfb_beyond_link_ms.medianMs} / ${row.ttfb_beyond_link_ms.p95Ms}` : '–'} |`,
      );
    }
  }
  out.push('');
  out.push(`Requests without a policy tag (page loads, scripts, setup) seen by the emulators: ${Object.entries(info.untaggedRequests).map(([s, n]) => `${s} ${n}`).join(', ')}.`);
  out.push('');
  out.push('Plots: [relative to optimal](relative-to-optimal.svg), [browser vs simulator](browser-vs-simulator.svg).');
  out.push('');
  return out.join('\n');
}

// ------------------------------------------------------------------ SVG

const esc = (text: string): string => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const POLICY_COLORS: Record<string, string> = {
  'single-A': '#a63603',
  'single-B': '#e6550d',
  'single-C': '#fd8d3c',
  random: '#fdd0a2',
  'round-robin': '#d9b38c',
  'webpp-paper': '#8c6bb1',
  'webpp-fast': '#2b8cbe',
  hedged: '#41ae76',
  optimal: '#525252',
  'optimal-complete': '#969696',
};
const colorOf = (policy: string): string => POLICY_COLORS[policy] ?? '#bdbdbd';

/** One panel per scenario: a bar per policy (browser), a tick for the simulator, a line at 1 (optimal) and at 1.05 (the goal). */
export function relativeToOptimalSvg(rows: readonly ResultRow[], scenarios: readonly string[]): string {
  const policies = [...new Set(rows.map((row) => row.policy))];
  const panelWidth = 28 * policies.length + 40;
  const height = 330;
  const top = 40;
  const bottom = 110;
  const plotHeight = height - top - bottom;
  const maxRatio = Math.max(2, ...rows.map((row) => Math.max(row.relative_to_optimal, row.sim_relative_to_optimal)).filter(Number.isFinite));
  const yMax = Math.ceil(maxRatio * 2) / 2;
  const y = (value: number): number => top + plotHeight * (1 - Math.min(value, yMax) / yMax);
  const width = 50 + panelWidth * scenarios.length + 10;
  const parts: string[] = [];
  parts.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="11">`);
  parts.push(`<rect width="${width}" height="${height}" fill="white"/>`);
  parts.push(`<text x="${width / 2}" y="16" text-anchor="middle" font-size="13">Mean response time ÷ optimal's, real Chromium (bars) and simulator (black ticks); lower is better</text>`);
  for (let tick = 0; tick <= yMax + 1e-9; tick += 0.5) {
    parts.push(`<text x="44" y="${y(tick) + 4}" text-anchor="end">${tick.toFixed(1)}</text>`);
    parts.push(`<line x1="48" x2="${width - 10}" y1="${y(tick)}" y2="${y(tick)}" stroke="#eee"/>`);
  }
  scenarios.forEach((scenario, s) => {
    const x0 = 50 + s * panelWidth;
    parts.push(`<text x="${x0 + panelWidth / 2}" y="${top - 6}" text-anchor="middle" font-weight="bold">${esc(scenario)}</text>`);
    parts.push(`<line x1="${x0 + 4}" x2="${x0 + panelWidth - 4}" y1="${y(1)}" y2="${y(1)}" stroke="#525252" stroke-dasharray="4 2"/>`);
    parts.push(`<line x1="${x0 + 4}" x2="${x0 + panelWidth - 4}" y1="${y(1.05)}" y2="${y(1.05)}" stroke="#2b8cbe" stroke-dasharray="2 2"/>`);
    policies.forEach((policy, p) => {
      const row = rows.find((candidate) => candidate.scenario === scenario && candidate.policy === policy);
      if (!row) return;
      const x = x0 + 20 + p * 28;
      const value = row.relative_to_optimal;
      parts.push(`<rect x="${x}" y="${y(value)}" width="20" height="${y(0) - y(value)}" fill="${colorOf(policy)}"><title>${esc(`${scenario} ${policy}: ${value.toFixed(3)} (simulator ${row.sim_relative_to_optimal.toFixed(3)})`)}</title></rect>`);
      if (value > yMax) parts.push(`<text x="${x + 10}" y="${y(yMax) + 10}" text-anchor="middle" fill="white" font-size="9">${value.toFixed(1)}</text>`);
      parts.push(`<line x1="${x - 2}" x2="${x + 22}" y1="${y(row.sim_relative_to_optimal)}" y2="${y(row.sim_relative_to_optimal)}" stroke="black" stroke-width="2"/>`);
      if (row.failed_requests > 0) parts.push(`<text x="${x + 10}" y="${y(value) - 3}" text-anchor="middle" fill="#b30000" font-size="9">✗${row.failed_requests}</text>`);
      parts.push(`<text transform="translate(${x + 14},${top + plotHeight + 6}) rotate(60)" font-size="10">${esc(policy)}</text>`);
    });
  });
  parts.push(`<text x="12" y="${top + plotHeight / 2}" transform="rotate(-90 12 ${top + plotHeight / 2})" text-anchor="middle">÷ optimal (mean)</text>`);
  parts.push(`<text x="50" y="${height - 8}" font-size="10">dashed grey: optimal (1.0); dotted blue: the goal (1.05); ✗n: failed requests</text>`);
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}

/** Browser ratio against simulator ratio, one point per (scenario, policy), with the tolerance band. */
export function browserVsSimulatorSvg(rows: readonly ResultRow[]): string {
  const size = 420;
  const margin = 50;
  const values = rows.flatMap((row) => [row.relative_to_optimal, row.sim_relative_to_optimal]).filter(Number.isFinite);
  const max = Math.ceil(Math.max(2, ...values) * 2) / 2;
  const scale = (value: number): number => ((value - 0.5) / (max - 0.5)) * (size - 2 * margin);
  const px = (value: number): number => margin + scale(value);
  const py = (value: number): number => size - margin - scale(value);
  const parts: string[] = [];
  parts.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${size + 140}" height="${size}" viewBox="0 0 ${size + 140} ${size}" font-family="sans-serif" font-size="11">`);
  parts.push(`<rect width="${size + 140}" height="${size}" fill="white"/>`);
  parts.push(`<text x="${size / 2}" y="18" text-anchor="middle" font-size="13">÷ optimal: real Chromium against the simulator</text>`);
  for (let tick = 0.5; tick <= max + 1e-9; tick += 0.5) {
    parts.push(`<line x1="${px(tick)}" x2="${px(tick)}" y1="${py(0.5)}" y2="${py(max)}" stroke="#eee"/><line x1="${px(0.5)}" x2="${px(max)}" y1="${py(tick)}" y2="${py(tick)}" stroke="#eee"/>`);
    parts.push(`<text x="${px(tick)}" y="${size - margin + 14}" text-anchor="middle">${tick.toFixed(1)}</text><text x="${margin - 6}" y="${py(tick) + 4}" text-anchor="end">${tick.toFixed(1)}</text>`);
  }
  // The tolerance band: ± max(0.1, 10%).
  const band: string[] = [];
  for (let v = 0.5; v <= max + 1e-9; v += 0.05) band.push(`${px(v)},${py(v + Math.max(0.1, 0.1 * v))}`);
  for (let v = max; v >= 0.5 - 1e-9; v -= 0.05) band.push(`${px(v)},${py(v - Math.max(0.1, 0.1 * v))}`);
  parts.push(`<clipPath id="plot"><rect x="${px(0.5)}" y="${py(max)}" width="${px(max) - px(0.5)}" height="${py(0.5) - py(max)}"/></clipPath>`);
  parts.push(`<polygon points="${band.join(' ')}" fill="#deebf7" stroke="none" clip-path="url(#plot)"/>`);
  parts.push(`<line x1="${px(0.5)}" y1="${py(0.5)}" x2="${px(max)}" y2="${py(max)}" stroke="#9ecae1"/>`);
  const scenarios = [...new Set(rows.map((row) => row.scenario))];
  const shapes = ['circle', 'square', 'diamond', 'triangle'];
  const marker = (shape: string, x: number, yy: number, color: string, title: string): string => {
    const t = `<title>${esc(title)}</title>`;
    if (shape === 'square') return `<rect x="${x - 4}" y="${yy - 4}" width="8" height="8" fill="${color}">${t}</rect>`;
    if (shape === 'diamond') return `<polygon points="${x},${yy - 5} ${x + 5},${yy} ${x},${yy + 5} ${x - 5},${yy}" fill="${color}">${t}</polygon>`;
    if (shape === 'triangle') return `<polygon points="${x},${yy - 5} ${x + 5},${yy + 4} ${x - 5},${yy + 4}" fill="${color}">${t}</polygon>`;
    return `<circle cx="${x}" cy="${yy}" r="4" fill="${color}">${t}</circle>`;
  };
  for (const row of rows) {
    if (!Number.isFinite(row.relative_to_optimal) || !Number.isFinite(row.sim_relative_to_optimal)) continue;
    const shape = shapes[scenarios.indexOf(row.scenario) % shapes.length]!;
    parts.push(marker(shape, px(Math.min(row.sim_relative_to_optimal, max)), py(Math.min(row.relative_to_optimal, max)), colorOf(row.policy), `${row.scenario} ${row.policy}: browser ${row.relative_to_optimal}, simulator ${row.sim_relative_to_optimal}`));
  }
  parts.push(`<text x="${size / 2}" y="${size - 12}" text-anchor="middle">simulator (mean over seeds)</text>`);
  parts.push(`<text x="14" y="${size / 2}" transform="rotate(-90 14 ${size / 2})" text-anchor="middle">real Chromium</text>`);
  scenarios.forEach((scenario, i) => parts.push(`${marker(shapes[i % shapes.length]!, size + 10, 50 + i * 18, '#525252', scenario)}<text x="${size + 20}" y="${54 + i * 18}">${esc(scenario)}</text>`));
  const policies = [...new Set(rows.map((row) => row.policy))];
  policies.forEach((policy, i) => parts.push(`<rect x="${size + 6}" y="${140 + i * 16}" width="9" height="9" fill="${colorOf(policy)}"/><text x="${size + 20}" y="${149 + i * 16}">${esc(policy)}</text>`));
  parts.push(`<text x="${size + 6}" y="${150 + policies.length * 16 + 10}" font-size="10">band: agreement tolerance</text>`);
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}
