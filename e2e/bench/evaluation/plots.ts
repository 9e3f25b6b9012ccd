/**
 * The evaluation's SVG plots: response time relative to optimal-complete per policy and
 * scenario (the paper's Figures 12 and 14), for the mean and for the p95, with the range over
 * runs as a whisker; and the browser against the simulator.
 */
import { BASELINE_POLICIES } from './agreement.js';
import { GOALS } from './goals.js';
import type { ResultRow } from './rows.js';

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
  webpp: '#084081',
  optimal: '#525252',
  'optimal-complete': '#969696',
};
const colorOf = (policy: string): string => POLICY_COLORS[policy] ?? '#bdbdbd';

type RatioField = 'relative_to_optimal' | 'relative_p95_to_optimal';
const SIM_FIELD: Record<RatioField, 'sim_relative_to_optimal' | 'sim_relative_p95_to_optimal'> = {
  relative_to_optimal: 'sim_relative_to_optimal',
  relative_p95_to_optimal: 'sim_relative_p95_to_optimal',
};

/**
 * One panel per scenario: a bar per policy (browser; the median over runs, a whisker for the
 * range), a tick for the simulator, a dashed line at 1 (optimal-complete) and a dotted one at
 * the goal. Bars above the axis's top are cut and labelled.
 */
export function relativeToOptimalSvg(rows: readonly ResultRow[], scenarios: readonly string[], field: RatioField = 'relative_to_optimal'): string {
  const policies = [...new Set(rows.map((row) => row.policy))];
  const goal = field === 'relative_to_optimal' ? GOALS.meanRatio : GOALS.p95Ratio;
  const panelWidth = 24 * policies.length + 30;
  const perRow = Math.min(scenarios.length, 5);
  const rowHeight = 300;
  const top = 50;
  const plotHeight = 180;
  const yMax = 3;
  const width = 50 + panelWidth * perRow + 10;
  const height = top + rowHeight * Math.ceil(scenarios.length / perRow) + 10;
  const runs = Math.max(...rows.map((row) => row.runs));
  const what = field === 'relative_to_optimal' ? 'Mean' : 'p95';
  const parts: string[] = [];
  parts.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="11">`);
  parts.push(`<rect width="${width}" height="${height}" fill="white"/>`);
  parts.push(`<text x="10" y="16" font-size="13">${what} response time ÷ optimal-complete's (lower is better): real Chromium, bars${runs > 1 ? ` (median of ${runs} runs; whisker: range)` : ''}; simulator, black ticks.</text>`);
  parts.push(`<text x="10" y="32" font-size="10">dashed grey: optimal-complete (1.0); dotted blue: the goal (${goal}); ✗n: failed requests; bars above ${yMax} are cut and labelled.</text>`);
  scenarios.forEach((scenario, s) => {
    const x0 = 50 + (s % perRow) * panelWidth;
    const y0 = top + Math.floor(s / perRow) * rowHeight;
    const y = (value: number): number => y0 + 20 + plotHeight * (1 - Math.min(value, yMax) / yMax);
    if (s % perRow === 0) {
      for (let tick = 0; tick <= yMax + 1e-9; tick += 0.5) {
        parts.push(`<text x="44" y="${y(tick) + 4}" text-anchor="end">${tick.toFixed(1)}</text>`);
        parts.push(`<line x1="48" x2="${width - 10}" y1="${y(tick)}" y2="${y(tick)}" stroke="#eee"/>`);
      }
      parts.push(`<text x="12" y="${y(yMax / 2)}" transform="rotate(-90 12 ${y(yMax / 2)})" text-anchor="middle">÷ optimal-complete</text>`);
    }
    parts.push(`<text x="${x0 + panelWidth / 2}" y="${y0 + 12}" text-anchor="middle" font-weight="bold">${esc(scenario)}</text>`);
    parts.push(`<line x1="${x0 + 4}" x2="${x0 + panelWidth - 4}" y1="${y(1)}" y2="${y(1)}" stroke="#525252" stroke-dasharray="4 2"/>`);
    parts.push(`<line x1="${x0 + 4}" x2="${x0 + panelWidth - 4}" y1="${y(goal)}" y2="${y(goal)}" stroke="#084081" stroke-dasharray="2 2"/>`);
    policies.forEach((policy, p) => {
      const row = rows.find((candidate) => candidate.scenario === scenario && candidate.policy === policy);
      if (!row || !Number.isFinite(row[field])) return;
      const x = x0 + 16 + p * 24;
      const value = row[field];
      const sim = row[SIM_FIELD[field]];
      const range = row.range?.[field];
      const title = `${scenario} ${policy}: ${value.toFixed(3)}${range ? ` (runs ${range[0]}–${range[1]})` : ''}, simulator ${sim.toFixed(3)}`;
      parts.push(`<rect x="${x}" y="${y(value)}" width="16" height="${y(0) - y(value)}" fill="${colorOf(policy)}"><title>${esc(title)}</title></rect>`);
      if (range) parts.push(`<line x1="${x + 8}" x2="${x + 8}" y1="${y(range[0])}" y2="${y(range[1])}" stroke="#252525" stroke-width="1.2"/>`);
      if (value > yMax) parts.push(`<text x="${x + 8}" y="${y(yMax) + 10}" text-anchor="middle" fill="white" font-size="8">${value.toFixed(1)}</text>`);
      if (Number.isFinite(sim)) parts.push(`<line x1="${x - 2}" x2="${x + 18}" y1="${y(sim)}" y2="${y(sim)}" stroke="black" stroke-width="2"/>`);
      if (row.failed_requests > 0) parts.push(`<text x="${x + 8}" y="${y(Math.min(value, yMax)) - 3}" text-anchor="middle" fill="#b30000" font-size="9">✗${row.failed_requests}</text>`);
      parts.push(`<text transform="translate(${x + 11},${y(0) + 6}) rotate(60)" font-size="10">${esc(policy)}</text>`);
    });
  });
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}

/** Browser ratio against simulator ratio, one point per (scenario, policy) without the baselines, with each point's tolerance as a bar. */
export function browserVsSimulatorSvg(rows: readonly ResultRow[]): string {
  const compared = rows.filter((row) => !BASELINE_POLICIES.includes(row.policy));
  const size = 420;
  const margin = 50;
  const max = 3;
  const scale = (value: number): number => ((value - 0.5) / (max - 0.5)) * (size - 2 * margin);
  const px = (value: number): number => margin + scale(value);
  const py = (value: number): number => size - margin - scale(value);
  const parts: string[] = [];
  parts.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${size + 160}" height="${size}" viewBox="0 0 ${size + 160} ${size}" font-family="sans-serif" font-size="11">`);
  parts.push(`<rect width="${size + 160}" height="${size}" fill="white"/>`);
  parts.push(`<text x="${size / 2}" y="18" text-anchor="middle" font-size="13">÷ optimal-complete: real Chromium against the simulator</text>`);
  for (let tick = 0.5; tick <= max + 1e-9; tick += 0.5) {
    parts.push(`<line x1="${px(tick)}" x2="${px(tick)}" y1="${py(0.5)}" y2="${py(max)}" stroke="#eee"/><line x1="${px(0.5)}" x2="${px(max)}" y1="${py(tick)}" y2="${py(tick)}" stroke="#eee"/>`);
    parts.push(`<text x="${px(tick)}" y="${size - margin + 14}" text-anchor="middle">${tick.toFixed(1)}</text><text x="${margin - 6}" y="${py(tick) + 4}" text-anchor="end">${tick.toFixed(1)}</text>`);
  }
  // The issue's ±10% band, clipped to the plot.
  parts.push(`<clipPath id="plot"><rect x="${px(0.5)}" y="${py(max)}" width="${px(max) - px(0.5)}" height="${py(0.5) - py(max)}"/></clipPath>`);
  parts.push(`<polygon clip-path="url(#plot)" points="${px(0.5)},${py(0.55)} ${px(max)},${py(max * 1.1)} ${px(max)},${py(max * 0.9)} ${px(0.5)},${py(0.45)}" fill="#deebf7" stroke="none"/>`);
  parts.push(`<line x1="${px(0.5)}" y1="${py(0.5)}" x2="${px(max)}" y2="${py(max)}" stroke="#9ecae1"/>`);
  const scenarios = [...new Set(compared.map((row) => row.scenario))];
  const shapes = ['circle', 'square', 'diamond', 'triangle', 'down'];
  const marker = (shape: string, x: number, yy: number, color: string, title: string, hollow: boolean): string => {
    const t = `<title>${esc(title)}</title>`;
    const paint = hollow ? `fill="white" stroke="${color}" stroke-width="1.5"` : `fill="${color}"`;
    if (shape === 'square') return `<rect x="${x - 4}" y="${yy - 4}" width="8" height="8" ${paint}>${t}</rect>`;
    if (shape === 'diamond') return `<polygon points="${x},${yy - 5} ${x + 5},${yy} ${x},${yy + 5} ${x - 5},${yy}" ${paint}>${t}</polygon>`;
    if (shape === 'triangle') return `<polygon points="${x},${yy - 5} ${x + 5},${yy + 4} ${x - 5},${yy + 4}" ${paint}>${t}</polygon>`;
    if (shape === 'down') return `<polygon points="${x},${yy + 5} ${x + 5},${yy - 4} ${x - 5},${yy - 4}" ${paint}>${t}</polygon>`;
    return `<circle cx="${x}" cy="${yy}" r="4" ${paint}>${t}</circle>`;
  };
  for (const row of compared) {
    if (!Number.isFinite(row.relative_to_optimal) || !Number.isFinite(row.sim_relative_to_optimal)) continue;
    // Five shapes, solid for the first five scenarios and hollow for the next five.
    const index = scenarios.indexOf(row.scenario);
    const shape = shapes[index % shapes.length]!;
    const x = px(Math.min(row.sim_relative_to_optimal, max));
    parts.push(`<line x1="${x}" x2="${x}" y1="${py(Math.min(row.sim_relative_to_optimal - row.agreement_tolerance, max))}" y2="${py(Math.min(row.sim_relative_to_optimal + row.agreement_tolerance, max))}" stroke="${colorOf(row.policy)}" stroke-opacity="0.35" stroke-width="3"/>`);
    const title = `${row.scenario} ${row.policy}: browser ${row.relative_to_optimal}, simulator ${row.sim_relative_to_optimal} (tolerance ±${row.agreement_tolerance})`;
    parts.push(marker(shape, x, py(Math.min(row.relative_to_optimal, max)), colorOf(row.policy), title, index >= shapes.length));
  }
  parts.push(`<text x="${size / 2}" y="${size - 12}" text-anchor="middle">simulator (mean over seeds)</text>`);
  parts.push(`<text x="14" y="${size / 2}" transform="rotate(-90 14 ${size / 2})" text-anchor="middle">real Chromium</text>`);
  scenarios.forEach((scenario, i) => parts.push(`${marker(shapes[i % shapes.length]!, size + 10, 40 + i * 16, '#525252', scenario, i >= shapes.length)}<text x="${size + 20}" y="${44 + i * 16}">${esc(scenario)}</text>`));
  const policies = [...new Set(compared.map((row) => row.policy))];
  const legendTop = 50 + scenarios.length * 16;
  policies.forEach((policy, i) => parts.push(`<rect x="${size + 6}" y="${legendTop + i * 16}" width="9" height="9" fill="${colorOf(policy)}"/><text x="${size + 20}" y="${legendTop + 9 + i * 16}">${esc(policy)}</text>`));
  const noteTop = legendTop + policies.length * 16 + 14;
  parts.push(`<text x="${size + 6}" y="${noteTop}" font-size="10">band: ±10% (the goal)</text>`);
  parts.push(`<text x="${size + 6}" y="${noteTop + 14}" font-size="10">bars: each row's tolerance</text>`);
  parts.push(`<text x="${size + 6}" y="${noteTop + 28}" font-size="10">values above 3 drawn at 3</text>`);
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}
