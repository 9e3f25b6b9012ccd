/**
 * The latency chart: each server's mean time-to-first-byte estimate over the last minutes,
 * plain SVG, log-scaled y axis (a near replica at 5 ms and a far one at 200 ms both stay
 * readable), a ±1 standard deviation band, and dashed segments while a server is failed.
 */
import type { ServerId } from '@webpp/core';
import { svg } from './dom.js';
import { formatMs } from './format.js';
import type { HistoryPoint, LatencyHistory } from './history.js';

export interface ChartOptions {
  /** Longest visible time window ending now; a younger history gets a shorter one (at least a minute). */
  maxWindowMs: number;
  colorOf: (server: ServerId) => string;
  labelOf: (server: ServerId) => string;
}

const MARGIN = { top: 12, right: 16, bottom: 26, left: 56 };
const Y_TICKS_MS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000];

export function renderLatencyChart(container: HTMLElement, history: LatencyHistory, nowMs: number, options: ChartOptions): void {
  const widthPx = Math.max(320, container.clientWidth);
  const heightPx = Math.max(180, container.clientHeight);
  const plotWidth = widthPx - MARGIN.left - MARGIN.right;
  const plotHeight = heightPx - MARGIN.top - MARGIN.bottom;
  const root = svg('svg', { viewBox: `0 0 ${widthPx} ${heightPx}`, preserveAspectRatio: 'none' });

  const oldestMs = Math.min(nowMs, ...history.servers().map((server) => history.points(server)[0]?.atMs ?? nowMs));
  const windowMs = Math.min(options.maxWindowMs, Math.max(60_000, Math.ceil((nowMs - oldestMs) / 30_000) * 30_000));
  const startMs = nowMs - windowMs;
  const visible = history.servers().map((server) => ({
    server,
    points: history.points(server).filter((point) => point.atMs >= startMs - 2000),
  }));
  const values = visible.flatMap(({ points }) => points.map((point) => point.meanMs)).filter((value) => value > 0);

  // Y range: from the tick below the smallest mean to the tick above the largest.
  const minMs = Math.min(...values, 10);
  const maxMs = Math.max(...values, 20);
  const lowTick = [...Y_TICKS_MS].reverse().find((tick) => tick <= minMs) ?? 1;
  const highTick = Y_TICKS_MS.find((tick) => tick >= maxMs) ?? Y_TICKS_MS[Y_TICKS_MS.length - 1]!;
  const logLow = Math.log10(lowTick);
  const logHigh = Math.log10(highTick);
  const y = (valueMs: number): number => {
    const clamped = Math.min(highTick, Math.max(lowTick, valueMs));
    return MARGIN.top + plotHeight * (1 - (Math.log10(clamped) - logLow) / (logHigh - logLow || 1));
  };
  const x = (atMs: number): number => MARGIN.left + plotWidth * ((atMs - startMs) / windowMs);

  // Grid and axes.
  for (const tick of Y_TICKS_MS.filter((value) => value >= lowTick && value <= highTick)) {
    root.append(svg('line', { class: 'grid-line', x1: MARGIN.left, x2: widthPx - MARGIN.right, y1: y(tick), y2: y(tick) }));
    const label = svg('text', { class: 'axis-label', x: MARGIN.left - 8, y: y(tick) + 4, 'text-anchor': 'end' });
    label.textContent = tick >= 1000 ? `${tick / 1000} s` : `${tick} ms`;
    root.append(label);
  }
  const stepMs = windowMs <= 60_000 ? 10_000 : windowMs <= 3 * 60_000 ? 30_000 : 60_000;
  for (let offsetMs = 0; offsetMs <= windowMs; offsetMs += stepMs) {
    const atMs = nowMs - offsetMs;
    const label = svg('text', { class: 'axis-label', x: x(atMs), y: heightPx - 6, 'text-anchor': offsetMs === 0 ? 'end' : 'middle' });
    label.textContent = offsetMs === 0 ? 'now' : offsetMs % 60_000 === 0 ? `−${offsetMs / 60_000} min` : `−${offsetMs / 1000} s`;
    root.append(label);
  }

  if (values.length === 0) {
    const empty = svg('text', { class: 'empty', x: MARGIN.left + plotWidth / 2, y: MARGIN.top + plotHeight / 2, 'text-anchor': 'middle' });
    empty.textContent = 'Waiting for the first latency samples…';
    root.append(empty);
    container.replaceChildren(root);
    return;
  }

  for (const { server, points } of visible) {
    if (points.length === 0) continue;
    const color = options.colorOf(server);
    // ±1 standard deviation band around the mean.
    const upper = points.map((point) => `${x(point.atMs).toFixed(1)},${y(point.meanMs + point.standardDeviationMs).toFixed(1)}`);
    const lower = points
      .slice()
      .reverse()
      .map((point) => `${x(point.atMs).toFixed(1)},${y(Math.max(0.001, point.meanMs - point.standardDeviationMs)).toFixed(1)}`);
    root.append(svg('polygon', { class: 'band', points: [...upper, ...lower].join(' '), fill: color }));
    for (const run of runsByState(points)) {
      const attrs = {
        class: run.state === 'failed' ? 'series-failed' : 'series',
        stroke: color,
        points: run.points.map((point) => `${x(point.atMs).toFixed(1)},${y(point.meanMs).toFixed(1)}`).join(' '),
      };
      root.append(svg('polyline', attrs));
    }
    const last = points[points.length - 1]!;
    root.append(svg('circle', { cx: x(last.atMs), cy: y(last.meanMs), r: 3.5, fill: color }));
    const title = svg('title');
    title.textContent = `${options.labelOf(server)}: ${formatMs(last.meanMs)}`;
    root.lastChild?.appendChild(title);
  }
  container.replaceChildren(root);
}

/** Splits a series into runs of one state; consecutive runs share their boundary point. */
function runsByState(points: readonly HistoryPoint[]): { state: HistoryPoint['state']; points: HistoryPoint[] }[] {
  const runs: { state: HistoryPoint['state']; points: HistoryPoint[] }[] = [];
  for (const point of points) {
    const current = runs[runs.length - 1];
    if (current && current.state === point.state) {
      current.points.push(point);
    } else {
      const previous = current?.points[current.points.length - 1];
      runs.push({ state: point.state, points: previous ? [previous, point] : [point] });
    }
  }
  return runs;
}
