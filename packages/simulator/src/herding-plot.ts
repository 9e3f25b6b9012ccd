/**
 * The herding experiment's plot, like Fei et al.'s Figures 9 and 10: requests per second that
 * arrive at each server over time, one panel per policy, so that a herd (load jumping from
 * server to server) and its absence show at a glance. Plain SVG, as policy-sweep-report.ts.
 */
import type { HerdingRow } from './herding.js';

const COLORS = ['#1b9e77', '#d95f02', '#7570b3', '#e7298a', '#66a61e', '#e6ab02', '#a6761d', '#666666', '#1f78b4', '#b2df8a'];
const esc = (text: string): string => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** One panel per row (same clients and servers), per-server load per second against time. */
export function herdingSvg(rows: readonly HerdingRow[], title: string): string {
  const panelWidth = 420;
  const panelHeight = 150;
  const columns = 2;
  const left = 50;
  const top = 46;
  const gap = 46;
  const width = left + columns * (panelWidth + gap);
  const height = top + Math.ceil(rows.length / columns) * (panelHeight + gap) + 10;
  const seconds = Math.max(1, ...rows.flatMap((row) => Object.values(row.load).map((series) => series.length)));
  const peak = Math.max(1, ...rows.flatMap((row) => Object.values(row.load).flat()));
  const parts: string[] = [];
  parts.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="10">`);
  parts.push(`<rect width="${width}" height="${height}" fill="white"/>`);
  parts.push(`<text x="10" y="18" font-size="13">${esc(title)}</text>`);
  parts.push('<text x="10" y="34">Requests per second arriving at each server (one line per server), as Fei et al. Figures 9–10; load_cv, mean and p95 after the warm-up.</text>');
  rows.forEach((row, index) => {
    const x0 = left + (index % columns) * (panelWidth + gap);
    const y0 = top + Math.floor(index / columns) * (panelHeight + gap) + 14;
    const px = (second: number): number => x0 + (second / seconds) * panelWidth;
    const py = (load: number): number => y0 + panelHeight - (load / peak) * panelHeight;
    parts.push(`<rect x="${x0}" y="${y0}" width="${panelWidth}" height="${panelHeight}" fill="none" stroke="#ccc"/>`);
    parts.push(`<text x="${x0}" y="${y0 - 4}" font-size="11">${esc(`${row.policy}: load_cv ${row.load_cv}, mean ${row.mean_ms} ms, p95 ${row.p95_ms} ms`)}</text>`);
    for (const tick of [0, Math.round(peak / 2), Math.round(peak)]) {
      parts.push(`<text x="${x0 - 4}" y="${py(tick) + 3}" text-anchor="end">${tick}</text>`);
    }
    for (let second = 0; second <= seconds; second += 10) {
      parts.push(`<text x="${px(second)}" y="${y0 + panelHeight + 11}" text-anchor="middle">${second} s</text>`);
    }
    Object.entries(row.load).forEach(([server, series], i) => {
      const points = series.map((load, second) => `${px(second + 0.5).toFixed(1)},${py(load).toFixed(1)}`).join(' ');
      parts.push(`<polyline fill="none" stroke="${COLORS[i % COLORS.length]}" stroke-width="1" points="${points}"><title>${esc(server)}</title></polyline>`);
    });
  });
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}
