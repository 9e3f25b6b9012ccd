/**
 * The generalization suite's plot: the empirical CDF of a ratio over seeds, one line per
 * policy, on a log x axis (ratios of 0.5 and 2 are equally far from 1). Plain SVG, as the
 * other plots in docs/benchmarks.
 */
const COLORS = ['#1b9e77', '#d95f02', '#7570b3', '#e7298a', '#66a61e', '#e6ab02'];
const esc = (text: string): string => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export interface CdfSeries {
  policy: string;
  values: readonly number[];
}

/** CDF of each series' values; a dashed line marks x = 1. */
export function ratioCdfSvg(series: readonly CdfSeries[], title: string, xLabel: string): string {
  const width = 720;
  const height = 420;
  const left = 60;
  const right = 20;
  const top = 50;
  const bottom = 50;
  const all = series.flatMap((line) => line.values).filter((value) => Number.isFinite(value) && value > 0);
  const minX = Math.min(0.5, ...all);
  const maxX = Math.max(2, ...all);
  const logMin = Math.log10(minX);
  const logMax = Math.log10(maxX);
  const px = (value: number): number => left + ((Math.log10(value) - logMin) / (logMax - logMin)) * (width - left - right);
  const py = (share: number): number => top + (1 - share) * (height - top - bottom);
  const parts: string[] = [];
  parts.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="11">`);
  parts.push(`<rect width="${width}" height="${height}" fill="white"/>`);
  parts.push(`<text x="10" y="18" font-size="13">${esc(title)}</text>`);
  parts.push(`<rect x="${left}" y="${top}" width="${width - left - right}" height="${height - top - bottom}" fill="none" stroke="#ccc"/>`);
  for (const share of [0, 0.25, 0.5, 0.75, 0.9, 1]) {
    parts.push(`<line x1="${left}" x2="${width - right}" y1="${py(share)}" y2="${py(share)}" stroke="#eee"/>`);
    parts.push(`<text x="${left - 4}" y="${py(share) + 4}" text-anchor="end">${share}</text>`);
  }
  for (const tick of [0.25, 0.5, 0.8, 1, 1.25, 2, 5, 10, 20, 50, 100, 200, 500, 1000]) {
    if (tick < minX || tick > maxX) continue;
    parts.push(`<line x1="${px(tick)}" x2="${px(tick)}" y1="${top}" y2="${height - bottom}" stroke="${tick === 1 ? '#333' : '#eee'}"${tick === 1 ? ' stroke-dasharray="4 3"' : ''}/>`);
    parts.push(`<text x="${px(tick)}" y="${height - bottom + 14}" text-anchor="middle">${tick}</text>`);
  }
  parts.push(`<text x="${(left + width - right) / 2}" y="${height - 12}" text-anchor="middle">${esc(xLabel)}</text>`);
  parts.push(`<text x="14" y="${(top + height - bottom) / 2}" transform="rotate(-90 14 ${(top + height - bottom) / 2})" text-anchor="middle">share of seeds</text>`);
  series.forEach((line, index) => {
    const sorted = line.values.filter((value) => Number.isFinite(value) && value > 0).sort((a, b) => a - b);
    const color = COLORS[index % COLORS.length]!;
    const points: string[] = [];
    sorted.forEach((value, i) => {
      points.push(`${px(value).toFixed(1)},${py(i / sorted.length).toFixed(1)}`, `${px(value).toFixed(1)},${py((i + 1) / sorted.length).toFixed(1)}`);
    });
    parts.push(`<polyline fill="none" stroke="${color}" stroke-width="1.6" points="${points.join(' ')}"><title>${esc(line.policy)}</title></polyline>`);
    parts.push(`<rect x="${left + 10}" y="${top + 8 + index * 16}" width="12" height="3" fill="${color}"/>`);
    parts.push(`<text x="${left + 28}" y="${top + 13 + index * 16}">${esc(`${line.policy} (${sorted.length} seeds)`)}</text>`);
  });
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}
