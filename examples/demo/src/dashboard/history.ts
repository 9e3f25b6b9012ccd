/**
 * A bounded history of each server's latency estimate, sampled by the dashboard once a
 * second, for the chart. Kept in sessionStorage so that reloading the dashboard keeps it.
 */
import type { ServerId, ServerState } from '@webpp/core';

export interface HistoryPoint {
  atMs: number;
  meanMs: number;
  standardDeviationMs: number;
  state: ServerState;
}

const STORAGE_KEY = 'webpp-dashboard-history-v1';

export class LatencyHistory {
  private readonly series = new Map<ServerId, HistoryPoint[]>();

  constructor(
    /** Points older than this are dropped. */
    readonly windowMs: number = 5 * 60_000,
    /** Hard cap per server, whatever the sampling rate. */
    readonly maxPointsPerServer: number = 1200,
  ) {}

  add(server: ServerId, point: HistoryPoint): void {
    let points = this.series.get(server);
    if (!points) {
      points = [];
      this.series.set(server, points);
    }
    const last = points[points.length - 1];
    if (last && last.atMs >= point.atMs) return;
    points.push(point);
    const oldestMs = point.atMs - this.windowMs;
    while (points.length > this.maxPointsPerServer || (points[0] && points[0].atMs < oldestMs)) points.shift();
  }

  servers(): ServerId[] {
    return [...this.series.keys()];
  }

  points(server: ServerId): readonly HistoryPoint[] {
    return this.series.get(server) ?? [];
  }

  save(storage: Storage): void {
    try {
      storage.setItem(STORAGE_KEY, JSON.stringify([...this.series]));
    } catch {
      // Storage full or disabled: the chart simply starts empty next time.
    }
  }

  load(storage: Storage, nowMs: number): void {
    try {
      const parsed: unknown = JSON.parse(storage.getItem(STORAGE_KEY) ?? '[]');
      if (!Array.isArray(parsed)) return;
      for (const entry of parsed) {
        if (!Array.isArray(entry) || typeof entry[0] !== 'string' || !Array.isArray(entry[1])) continue;
        for (const point of entry[1] as unknown[]) {
          if (isHistoryPoint(point) && point.atMs > nowMs - this.windowMs) this.add(entry[0], point);
        }
      }
    } catch {
      // A corrupt entry is ignored.
    }
  }
}

function isHistoryPoint(value: unknown): value is HistoryPoint {
  if (typeof value !== 'object' || value === null) return false;
  const point = value as Record<string, unknown>;
  return (
    typeof point.atMs === 'number' &&
    typeof point.meanMs === 'number' &&
    typeof point.standardDeviationMs === 'number' &&
    (point.state === 'available' || point.state === 'failed')
  );
}
