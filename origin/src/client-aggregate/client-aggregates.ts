/**
 * The client aggregate for first visits (issue 13 §6): per (network class, replica), what the
 * workers of that class reported of their own response times — and nothing per visitor. Each
 * cell holds four numbers and two counters, whatever the number of reports:
 *
 * - a decayed geometric mean of the reported times: Σw·ln(ms) / Σw, every weight halving each
 *   `halfLifeMs` (the geometric mean, as the policy's A = R/S factor, so that one outlier does
 *   not move it far; response times are heavy-tailed);
 * - how many reports arrived in the current and in the previous report interval (tumbling
 *   windows of `intervalMs`). An honest worker reports at most once per interval (the header
 *   tells it the interval), so it adds at most 2 to that count; a row is published only when
 *   the count reaches `minReports` (k ≥ 3), so no single worker's figures leave as an
 *   "aggregate" (k-anonymity in the style of Sweeney 2002; a client that lies about its
 *   interval is bounded by the rate limit instead).
 *
 * Reports are taken per class through a token bucket (`reportsPerMinute`, same burst). The
 * classes are opaque ids (network-class.ts), at most MAX_CLASSES of them (least recently used
 * dropped), at most MAX_SERVERS_PER_CLASS replicas each. Memory only: a restart forgets it.
 */
import { LRUCache } from 'lru-cache';
import type { AggregateResponseTime, ClientReportRow } from '@webpp/core';

export interface ClientAggregatesOptions {
  intervalMs: number;
  minReports: number;
  halfLifeMs: number;
  reportsPerMinute: number;
}

interface Cell {
  /** Σw and Σw·ln(ms), decayed to `updatedAtMs`. */
  weight: number;
  logSum: number;
  updatedAtMs: number;
  /** Reports in interval number `window` (floor(t / intervalMs)), and in the one before. */
  window: number;
  current: number;
  previous: number;
}

interface NetworkClassEntry {
  cells: Map<string, Cell>;
  /** Token bucket of the rate limit. */
  tokens: number;
  refilledAtMs: number;
}

/** What the statistics show (`origin.clientAggregate`): counts only. */
export interface ClientAggregateGauges {
  classes: number;
  cells: number;
  publishedCells: number;
  reportsAccepted: number;
  reportsRateLimited: number;
  rowsIgnored: number;
  headersWithRows: number;
}

const MAX_CLASSES = 4096;
const MAX_SERVERS_PER_CLASS = 64;
/** Reported times are clamped to [1 ms, 60 s] before the logarithm. */
const MIN_MS = 1;
const MAX_MS = 60_000;

export class ClientAggregates {
  private readonly classes = new LRUCache<string, NetworkClassEntry>({ max: MAX_CLASSES });
  private reportsAccepted = 0;
  private reportsRateLimited = 0;
  private rowsIgnored = 0;
  headersWithRows = 0;

  constructor(private readonly options: ClientAggregatesOptions) {}

  /**
   * Folds one report of network class `classId` into its cells. `isKnownServer`: only
   * replicas the site uses are kept. Returns false when the class's rate limit refused it.
   */
  take(classId: string, rows: readonly ClientReportRow[], isKnownServer: (server: string) => boolean, nowMs: number): boolean {
    const entry = this.classes.get(classId) ?? { cells: new Map<string, Cell>(), tokens: this.options.reportsPerMinute, refilledAtMs: nowMs };
    entry.tokens = Math.min(this.options.reportsPerMinute, entry.tokens + ((nowMs - entry.refilledAtMs) * this.options.reportsPerMinute) / 60_000);
    entry.refilledAtMs = nowMs;
    this.classes.set(classId, entry);
    if (entry.tokens < 1) {
      this.reportsRateLimited += 1;
      return false;
    }
    entry.tokens -= 1;
    this.reportsAccepted += 1;
    const seen = new Set<string>();
    for (const row of rows) {
      if (seen.has(row.server) || !isKnownServer(row.server)) {
        this.rowsIgnored += 1;
        continue;
      }
      seen.add(row.server);
      let cell = entry.cells.get(row.server);
      if (cell === undefined) {
        if (entry.cells.size >= MAX_SERVERS_PER_CLASS) {
          this.rowsIgnored += 1;
          continue;
        }
        cell = { weight: 0, logSum: 0, updatedAtMs: nowMs, window: this.windowOf(nowMs), current: 0, previous: 0 };
        entry.cells.set(row.server, cell);
      }
      this.advance(cell, nowMs);
      cell.weight += 1;
      cell.logSum += Math.log(Math.min(MAX_MS, Math.max(MIN_MS, row.responseMs)));
      cell.current += 1;
    }
    return true;
  }

  /** The rows of `classId` that rest on at least minReports reports (none for an unknown class). */
  published(classId: string | undefined, nowMs: number): AggregateResponseTime[] {
    const entry = classId === undefined ? undefined : this.classes.peek(classId);
    if (entry === undefined) return [];
    const rows: AggregateResponseTime[] = [];
    for (const [server, cell] of entry.cells) {
      const reports = this.reportsOf(cell, nowMs);
      if (reports >= this.options.minReports && cell.weight > 0) rows.push({ server, responseMs: Math.exp(cell.logSum / cell.weight), sampleCount: reports });
    }
    return rows;
  }

  gauges(nowMs: number): ClientAggregateGauges {
    let cells = 0;
    let publishedCells = 0;
    for (const entry of this.classes.values()) {
      cells += entry.cells.size;
      for (const cell of entry.cells.values()) if (this.reportsOf(cell, nowMs) >= this.options.minReports) publishedCells += 1;
    }
    const { reportsAccepted, reportsRateLimited, rowsIgnored, headersWithRows } = this;
    return { classes: this.classes.size, cells, publishedCells, reportsAccepted, reportsRateLimited, rowsIgnored, headersWithRows };
  }

  /** Everything held, as plain JSON (for inspection: class ids, and per cell its numbers). */
  dump(): { classId: string; tokens: number; cells: ({ server: string } & Cell)[] }[] {
    return [...this.classes.entries()].map(([classId, entry]) => ({ classId, tokens: entry.tokens, cells: [...entry.cells].map(([server, cell]) => ({ server, ...cell })) }));
  }

  private windowOf(nowMs: number): number {
    return Math.floor(nowMs / this.options.intervalMs);
  }

  /** Reports of the current and the previous interval. */
  private reportsOf(cell: Cell, nowMs: number): number {
    const window = this.windowOf(nowMs);
    if (window === cell.window) return cell.current + cell.previous;
    return window === cell.window + 1 ? cell.current : 0;
  }

  /** Decays the weights to `nowMs` (2^(−Δt/halfLife)) and rolls the interval counters. */
  private advance(cell: Cell, nowMs: number): void {
    const decay = Math.pow(2, -Math.max(0, nowMs - cell.updatedAtMs) / this.options.halfLifeMs);
    cell.weight *= decay;
    cell.logSum *= decay;
    cell.updatedAtMs = nowMs;
    const window = this.windowOf(nowMs);
    if (window !== cell.window) {
      cell.previous = window === cell.window + 1 ? cell.current : 0;
      cell.current = 0;
      cell.window = window;
    }
  }
}

type MetricWriter = (name: string, type: 'counter' | 'gauge', help: string, samples: [Record<string, string>, number][]) => void;

/** The client aggregate block of /metrics (`webpp_client_aggregate_*`); nothing when it is off. */
export function writeClientAggregateMetrics(metric: MetricWriter, gauges: ClientAggregateGauges | undefined): void {
  if (gauges === undefined) return;
  metric('webpp_client_aggregate_classes', 'gauge', 'Network classes with an aggregate (opaque ids; least recently used dropped).', [[{}, gauges.classes]]);
  metric('webpp_client_aggregate_cells', 'gauge', '(network class, replica) aggregates held, and those with enough reports to be sent.', [
    [{ state: 'held' }, gauges.cells],
    [{ state: 'published' }, gauges.publishedCells],
  ]);
  metric('webpp_client_reports_total', 'counter', 'Client reports, by result.', [
    [{ result: 'accepted' }, gauges.reportsAccepted],
    [{ result: 'rate-limited' }, gauges.reportsRateLimited],
  ]);
  metric('webpp_client_report_rows_ignored_total', 'counter', 'Report rows ignored (a server the site does not use, a repeated or one too many).', [[{}, gauges.rowsIgnored]]);
  metric('webpp_client_aggregate_headers_total', 'counter', 'Responses that carried aggregate rows.', [[{}, gauges.headersWithRows]]);
}
