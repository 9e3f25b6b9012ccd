/**
 * The policy sweep as a markdown table and as one plot: extra requests (x) against mean
 * response time ÷ optimal-complete's (y), one line per swept option through its values, the
 * default marked, and the goals of issue 11 (≤ 5% extra requests, ≤ 1.10 × optimal) drawn in.
 */
import type { PolicySweepResult, PolicySweepRow } from './policy-sweep.js';

const COLORS = ['#1b9e77', '#d95f02', '#7570b3', '#e7298a', '#66a61e', '#e6ab02'];
const esc = (text: string): string => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** The 'all' rows of one option, in the order of its values, with the default among them. */
function lineOf(rows: readonly PolicySweepRow[], parameter: string, defaults: Readonly<Record<string, number>>): { value: number; row: PolicySweepRow }[] {
  const all = rows.filter((row) => row.scenario === 'all');
  const base = all.find((row) => row.is_default)!;
  const points = all.filter((row) => row.parameter === parameter).map((row) => ({ value: row.value!, row }));
  points.push({ value: defaults[parameter]!, row: base });
  return points.sort((a, b) => a.value - b.value);
}

export function policySweepSvg(result: PolicySweepResult, defaults: Readonly<Record<string, number>>, goals = { extraRequestsPct: 5, meanRatio: 1.1 }): string {
  const all = result.rows.filter((row) => row.scenario === 'all');
  const parameters = [...new Set(all.filter((row) => !row.is_default).map((row) => row.parameter))];
  const width = 760;
  const height = 480;
  const left = 60;
  const right = 200;
  const top = 50;
  const bottom = 50;
  const xMax = Math.max(goals.extraRequestsPct * 1.5, ...all.map((row) => row.extra_requests_pct)) * 1.05;
  const yValues = all.map((row) => row.relative_to_optimal);
  const yMin = Math.min(1, ...yValues);
  const yMax = Math.max(goals.meanRatio + 0.02, ...yValues) + 0.02;
  const px = (value: number): number => left + (value / xMax) * (width - left - right);
  const py = (value: number): number => height - bottom - ((value - yMin) / (yMax - yMin)) * (height - top - bottom);
  const parts: string[] = [];
  parts.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="11">`);
  parts.push(`<rect width="${width}" height="${height}" fill="white"/>`);
  parts.push(`<text x="10" y="18" font-size="13">The webpp policy's tradeoff (simulator): extra requests against mean time ÷ optimal-complete, over every scenario</text>`);
  parts.push(`<text x="10" y="34" font-size="10">One option varied at a time around the defaults (★); the dotted lines are the goals of issue 11. Lower and further left is better.</text>`);
  const xStep = xMax > 40 ? 10 : xMax > 15 ? 5 : 1;
  for (let tick = 0; tick <= xMax; tick += xStep) {
    parts.push(`<line x1="${px(tick)}" x2="${px(tick)}" y1="${py(yMin)}" y2="${py(yMax)}" stroke="#eee"/><text x="${px(tick)}" y="${height - bottom + 14}" text-anchor="middle">${tick}</text>`);
  }
  const yStep = yMax - yMin > 0.6 ? 0.1 : 0.05;
  for (let tick = Math.ceil(yMin / yStep) * yStep; tick <= yMax + 1e-9; tick += yStep) {
    parts.push(`<line x1="${px(0)}" x2="${px(xMax)}" y1="${py(tick)}" y2="${py(tick)}" stroke="#eee"/><text x="${left - 6}" y="${py(tick) + 4}" text-anchor="end">${tick.toFixed(2)}</text>`);
  }
  parts.push(`<line x1="${px(goals.extraRequestsPct)}" x2="${px(goals.extraRequestsPct)}" y1="${py(yMin)}" y2="${py(yMax)}" stroke="#084081" stroke-dasharray="2 2"/>`);
  parts.push(`<line x1="${px(0)}" x2="${px(xMax)}" y1="${py(goals.meanRatio)}" y2="${py(goals.meanRatio)}" stroke="#084081" stroke-dasharray="2 2"/>`);
  parameters.forEach((parameter, i) => {
    const color = COLORS[i % COLORS.length]!;
    const points = lineOf(result.rows, parameter, defaults);
    parts.push(`<polyline fill="none" stroke="${color}" stroke-width="1.5" points="${points.map(({ row }) => `${px(row.extra_requests_pct)},${py(row.relative_to_optimal)}`).join(' ')}"/>`);
    for (const { value, row } of points) {
      if (row.is_default) continue;
      const title = `${parameter} = ${value}: ÷ optimal ${row.relative_to_optimal} (worst ${row.worst_scenario} ${row.worst_relative_to_optimal}), extra ${row.extra_requests_pct}%`;
      parts.push(`<circle cx="${px(row.extra_requests_pct)}" cy="${py(row.relative_to_optimal)}" r="3.5" fill="${color}"><title>${esc(title)}</title></circle>`);
      parts.push(`<text x="${px(row.extra_requests_pct) + 5}" y="${py(row.relative_to_optimal) - 4}" font-size="9" fill="${color}">${value}</text>`);
    }
    parts.push(`<rect x="${width - right + 14}" y="${top + i * 18}" width="10" height="10" fill="${color}"/><text x="${width - right + 30}" y="${top + 9 + i * 18}">${esc(parameter)}</text>`);
  });
  const base = all.find((row) => row.is_default)!;
  parts.push(
    `<text x="${px(base.extra_requests_pct)}" y="${py(base.relative_to_optimal) + 5}" text-anchor="middle" font-size="16" fill="black">★<title>${esc(`defaults: ÷ optimal ${base.relative_to_optimal}, extra ${base.extra_requests_pct}%`)}</title></text>`,
  );
  parts.push(`<text x="${width - right + 14}" y="${top + parameters.length * 18 + 14}" font-size="10">★ the defaults: ${base.relative_to_optimal.toFixed(3)}×, ${base.extra_requests_pct}%</text>`);
  parts.push(`<text x="${(left + width - right) / 2}" y="${height - 12}" text-anchor="middle">extra requests, % of requests (hedges, refreshes, probes, resumes)</text>`);
  parts.push(`<text x="14" y="${(top + height - bottom) / 2}" transform="rotate(-90 14 ${(top + height - bottom) / 2})" text-anchor="middle">mean ÷ optimal-complete (mean over scenarios)</text>`);
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}

export function policySweepMarkdown(result: PolicySweepResult, defaults: Readonly<Record<string, number>>, preamble: string): string {
  const all = result.rows.filter((row) => row.scenario === 'all');
  const scenarios = [...new Set(result.rows.filter((row) => row.scenario !== 'all').map((row) => row.scenario))];
  const out: string[] = ['# Sweep of the webpp policy (simulator)', '', preamble, ''];
  out.push(`Defaults: ${Object.entries(defaults).map(([name, value]) => `\`${name}\` = ${value}`).join(', ')}.`);
  out.push('');
  out.push(`| option | value | ÷ optimal (mean over scenarios) | worst scenario | p95 ÷ optimal | extra requests % | hedges | retries and resumes | refreshes | probes | failed | ${scenarios.join(' | ')} |`);
  out.push(`| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | ${scenarios.map(() => '---').join(' | ')} |`);
  for (const row of all) {
    const perScenario = scenarios.map((scenario) => result.rows.find((candidate) => candidate.scenario === scenario && candidate.parameter === row.parameter && candidate.value === row.value)!.relative_to_optimal.toFixed(3));
    const label = row.is_default ? '**defaults**' : row.parameter;
    out.push(
      `| ${label} | ${row.value ?? '–'} | ${row.relative_to_optimal.toFixed(3)} | ${row.worst_scenario} ${row.worst_relative_to_optimal.toFixed(3)} | ${row.relative_p95_to_optimal.toFixed(3)} | ${row.extra_requests_pct} | ` +
        `${(row.exchanges['hedge'] ?? 0) + (row.exchanges['parallel'] ?? 0)} | ${row.exchanges['retry'] ?? 0} | ${row.exchanges['refresh'] ?? 0} | ${row.exchanges['probe'] ?? 0} | ${row.failed_requests} | ${perScenario.join(' | ')} |`,
    );
  }
  out.push('');
  out.push(`${result.runs} simulated runs in ${(result.elapsedMs / 1000).toFixed(1)} s of wall time. Plot: [sweep-v2.svg](sweep-v2.svg).`);
  out.push('');
  return out.join('\n');
}
