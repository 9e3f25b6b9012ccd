/**
 * Requests per second at each server over time, one panel per policy (as Fei et al.'s
 * Figures 9 and 10 plot one server's load), as an SVG file for docs/evaluation.md.
 */
const esc = (text: string): string => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const SERVER_COLORS = ['#084081', '#e6550d', '#41ae76', '#8c6bb1', '#969696'];
const PANEL_WIDTH = 300;
const PANEL_HEIGHT = 150;
const MARGIN = { left: 40, top: 28, bottom: 30, right: 12 };

export interface LoadPanel {
  title: string;
  /** Requests per bin, by server name. */
  load: Record<string, number[]>;
  binMs: number;
}

export function loadOverTimeSvg(panels: readonly LoadPanel[]): string {
  const width = panels.length * (PANEL_WIDTH + MARGIN.left + MARGIN.right);
  const height = PANEL_HEIGHT + MARGIN.top + MARGIN.bottom + 18;
  const peak = Math.max(1, ...panels.flatMap((panel) => Object.values(panel.load).flat().map((count) => (count * 1000) / panel.binMs)));
  const yMax = Math.ceil(peak / 10) * 10;
  const parts: string[] = [];
  panels.forEach((panel, index) => {
    const x0 = index * (PANEL_WIDTH + MARGIN.left + MARGIN.right) + MARGIN.left;
    const bins = Math.max(...Object.values(panel.load).map((row) => row.length));
    const x = (bin: number): number => x0 + (bins <= 1 ? 0 : (bin / (bins - 1)) * PANEL_WIDTH);
    const y = (perSecond: number): number => MARGIN.top + PANEL_HEIGHT - (perSecond / yMax) * PANEL_HEIGHT;
    parts.push(`<text x="${x0}" y="16" font-size="12" font-weight="bold">${esc(panel.title)}</text>`);
    parts.push(`<line x1="${x0}" y1="${y(0)}" x2="${x0 + PANEL_WIDTH}" y2="${y(0)}" stroke="#333"/><line x1="${x0}" y1="${y(0)}" x2="${x0}" y2="${y(yMax)}" stroke="#333"/>`);
    for (const tick of [0, yMax / 2, yMax]) parts.push(`<text x="${x0 - 4}" y="${y(tick) + 4}" font-size="9" text-anchor="end">${tick}</text>`);
    parts.push(`<text x="${x0 + PANEL_WIDTH / 2}" y="${y(0) + 22}" font-size="9" text-anchor="middle">time (s), ${bins * (panel.binMs / 1000)} s</text>`);
    Object.entries(panel.load).forEach(([server, row], serverIndex) => {
      const color = SERVER_COLORS[serverIndex % SERVER_COLORS.length] ?? '#333';
      const points = row.map((count, bin) => `${x(bin).toFixed(1)},${y((count * 1000) / panel.binMs).toFixed(1)}`).join(' ');
      parts.push(`<polyline fill="none" stroke="${color}" stroke-width="1.5" points="${points}"/>`);
      parts.push(`<text x="${x0 + PANEL_WIDTH - 60 + serverIndex * 22}" y="${MARGIN.top - 4}" font-size="10" fill="${color}">${esc(server)}</text>`);
    });
  });
  parts.push(`<text x="4" y="${height - 4}" font-size="9">requests per second at each server (GET and HEAD of the images)</text>`);
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif">\n${parts.join('\n')}\n</svg>\n`;
}
