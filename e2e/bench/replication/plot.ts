/**
 * The replication bench's plot, in the shape of DCWS's Figure 8 (Baker and Moon 1998):
 * connections (requests) per second over time, total and per server, without and with
 * automatic replication side by side; under them p95 response time; migrations as ticks.
 */
import type { SecondRow } from '../replication.bench.js';

const COLOURS = ['#d62728', '#1f77b4', '#2ca02c', '#9467bd', '#ff7f0e'];
const PANEL_W = 420;
const TOP_H = 220;
const BOTTOM_H = 110;

function polyline(points: [number, number][], colour: string, width = 1.5): string {
  return `<polyline fill="none" stroke="${colour}" stroke-width="${width}" points="${points.map(([x, y]) => `${x.toFixed(1)},${y.toFixed(1)}`).join(' ')}"/>`;
}

function panel(rows: SecondRow[], servers: number, x0: number, title: string, maxRps: number, maxP95: number, seconds: number): string {
  const xOf = (second: number): number => x0 + (second / seconds) * PANEL_W;
  const yTop = (rps: number): number => 40 + TOP_H - (rps / maxRps) * TOP_H;
  const yBottom = (ms: number): number => 40 + TOP_H + 40 + BOTTOM_H - (ms / maxP95) * BOTTOM_H;
  const parts = [
    `<text x="${x0}" y="30" font-size="13" font-weight="bold">${title}</text>`,
    `<rect x="${x0}" y="40" width="${PANEL_W}" height="${TOP_H}" fill="none" stroke="#999"/>`,
    `<rect x="${x0}" y="${40 + TOP_H + 40}" width="${PANEL_W}" height="${BOTTOM_H}" fill="none" stroke="#999"/>`,
    polyline(rows.map((row) => [xOf(row.second), yTop(row.requests)]), '#000', 2),
  ];
  for (let s = 0; s < servers; s += 1) parts.push(polyline(rows.map((row) => [xOf(row.second), yTop(row.requestsPerServer[s] ?? 0)]), COLOURS[s % COLOURS.length] ?? '#000'));
  parts.push(polyline(rows.map((row) => [xOf(row.second), yBottom(row.p95Ms)]), '#000'));
  let previous = 0;
  for (const row of rows) {
    if (row.migrations > previous) parts.push(`<line x1="${xOf(row.second)}" x2="${xOf(row.second)}" y1="${40 + TOP_H - 8}" y2="${40 + TOP_H}" stroke="#555"/>`);
    previous = row.migrations;
  }
  parts.push(`<text x="${x0 + PANEL_W / 2}" y="${40 + TOP_H + 40 + BOTTOM_H + 18}" font-size="11" text-anchor="middle">time (s)</text>`);
  return parts.join('\n');
}

export function phaseSvg(without: SecondRow[], withReplication: SecondRow[], servers: number): string {
  const maxRps = Math.max(10, ...without.map((r) => r.requests), ...withReplication.map((r) => r.requests)) * 1.05;
  const maxP95 = Math.max(10, ...without.map((r) => r.p95Ms), ...withReplication.map((r) => r.p95Ms)) * 1.05;
  const seconds = Math.max(without.length, withReplication.length, 1);
  const width = 60 + 2 * PANEL_W + 40;
  const height = 40 + TOP_H + 40 + BOTTOM_H + 60;
  const legend = [
    `<text x="60" y="${height - 10}" font-size="11">black: total requests/s (top), p95 ms (bottom); ` +
      Array.from({ length: servers }, (_, s) => `<tspan fill="${COLOURS[s % COLOURS.length]}">${s === 0 ? 'home' : `co-op ${s}`}</tspan>`).join(', ') +
      `; ticks: migrations</text>`,
    `<text x="10" y="${40 + TOP_H / 2}" font-size="11" transform="rotate(-90 10 ${40 + TOP_H / 2})">requests/s (max ${Math.round(maxRps)})</text>`,
    `<text x="10" y="${40 + TOP_H + 40 + BOTTOM_H / 2 + 30}" font-size="11" transform="rotate(-90 10 ${40 + TOP_H + 40 + BOTTOM_H / 2 + 30})">p95 ms (max ${Math.round(maxP95)})</text>`,
  ];
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif">`,
    `<rect width="100%" height="100%" fill="#fff"/>`,
    panel(without, servers, 50, 'without automatic replication', maxRps, maxP95, seconds),
    panel(withReplication, servers, 60 + PANEL_W + 20, 'with automatic replication (DCWS)', maxRps, maxP95, seconds),
    ...legend,
    '</svg>',
    '',
  ].join('\n');
}
