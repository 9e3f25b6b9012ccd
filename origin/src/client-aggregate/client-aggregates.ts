/**
 * The client aggregate for first visits (issue 13 §6): per (network class, replica), what the
 * workers of that class reported of their own response times — and nothing per visitor. Each
 * cell holds four numbers and two counters, whatever the number of reports:
 *
 * - a decayed geometric mean of the reported times: Σw·ln(ms) / Σw, every weight halving each
 *   `halfLifeMs` (the geometric mean, as the policy's A = R/S factor, so that one outlier does
 *   not move it far; response times are heavy-tailed);
 * - how many DISTINCT reporters (reporter ids, network-class.ts: an IPv4 address or an IPv6
 *   /64) reported it in the current report interval (tumbling windows of `intervalMs`), and
 *   in the previous one. A row is published only when it rests on `minReports` (k ≥ 3)
 *   distinct reporters, so no single client's figures leave as an "aggregate" however many
 *   reports it sends (k-anonymity in the style of Sweeney 2002), and `n` says how many.
 *
 * One reporter's weight is capped: a class takes at most one report per reporter and interval
 * (what an honest worker sends; the header tells it the interval); a second one is ignored
 * (`reportsRepeated`). The reporters seen are kept per class for the current and the previous
 * interval only, as opaque keyed-hash numbers, at most MAX_REPORTERS_PER_WINDOW each.
 * Reports are also taken per class through a token bucket (`reportsPerMinute`, same burst).
 * The classes are opaque ids (network-class.ts), at most MAX_CLASSES of them (least recently
 * used dropped), at most MAX_SERVERS_PER_CLASS replicas each. Memory only: a restart forgets it.
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
  /**
   * Distinct reporters of this replica in interval number `window` (floor(t / intervalMs)),
   * of which `currentNew` did not report to the class in the interval before, and the count
   * of the interval before. n = previous + currentNew (never more than the distinct reporters).
   */
  window: number;
  current: number;
  currentNew: number;
  previous: number;
}

/** The reporters a class took a report from in interval `window`, and in the one before. */
interface ReporterWindows {
  window: number;
  current: Set<number>;
  previous: Set<number>;
}

interface NetworkClassEntry {
  cells: Map<string, Cell>;
  reporters: ReporterWindows;
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
  reportsRepeated: number;
  rowsIgnored: number;
  headersWithRows: number;
}

const MAX_CLASSES = 4096;
const MAX_SERVERS_PER_CLASS = 64;
/** Reporters remembered per class and interval; reports from further ones are ignored as repeats. */
const MAX_REPORTERS_PER_WINDOW = 1024;
/** Reported times are clamped to [1 ms, 60 s] before the logarithm. */
const MIN_MS = 1;
const MAX_MS = 60_000;

export class ClientAggregates {
  private readonly classes = new LRUCache<string, NetworkClassEntry>({ max: MAX_CLASSES });
  private reportsAccepted = 0;
  private reportsRateLimited = 0;
  private reportsRepeated = 0;
  private rowsIgnored = 0;
  headersWithRows = 0;

  constructor(private readonly options: ClientAggregatesOptions) {}

  /**
   * Folds one report of network class `classId`, sent by reporter `reporterId`, into its
   * cells. `isKnownServer`: only replicas the site uses are kept. Returns false when the
   * class's rate limit refused it; a reporter's second report in one interval is taken
   * (true) but ignored.
   */
  take(classId: string, reporterId: number, rows: readonly ClientReportRow[], isKnownServer: (server: string) => boolean, nowMs: number): boolean {
    const window = this.windowOf(nowMs);
    const entry = this.classes.get(classId) ?? {
      cells: new Map<string, Cell>(),
      reporters: { window, current: new Set<number>(), previous: new Set<number>() },
      tokens: this.options.reportsPerMinute,
      refilledAtMs: nowMs,
    };
    entry.tokens = Math.min(this.options.reportsPerMinute, entry.tokens + ((nowMs - entry.refilledAtMs) * this.options.reportsPerMinute) / 60_000);
    entry.refilledAtMs = nowMs;
    this.classes.set(classId, entry);
    if (entry.tokens < 1) {
      this.reportsRateLimited += 1;
      return false;
    }
    entry.tokens -= 1;
    const reporters = rollReporters(entry.reporters, window);
    if (reporters.current.has(reporterId) || reporters.current.size >= MAX_REPORTERS_PER_WINDOW) {
      this.reportsRepeated += 1;
      return true;
    }
    reporters.current.add(reporterId);
    const isNew = !reporters.previous.has(reporterId);
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
        cell = { weight: 0, logSum: 0, updatedAtMs: nowMs, window, current: 0, currentNew: 0, previous: 0 };
        entry.cells.set(row.server, cell);
      }
      this.advance(cell, nowMs);
      cell.weight += 1;
      cell.logSum += Math.log(Math.min(MAX_MS, Math.max(MIN_MS, row.responseMs)));
      cell.current += 1;
      if (isNew) cell.currentNew += 1;
    }
    return true;
  }

  /** The rows of `classId` that rest on at least minReports distinct reporters (none for an unknown class). */
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
    const { reportsAccepted, reportsRateLimited, reportsRepeated, rowsIgnored, headersWithRows } = this;
    return { classes: this.classes.size, cells, publishedCells, reportsAccepted, reportsRateLimited, reportsRepeated, rowsIgnored, headersWithRows };
  }

  /**
   * Everything held, as plain JSON (for inspection: class ids, per class how many reporters it
   * remembers — opaque numbers, not shown — and per cell its numbers).
   */
  dump(): { classId: string; tokens: number; reporters: number; cells: ({ server: string } & Cell)[] }[] {
    return [...this.classes.entries()].map(([classId, entry]) => ({
      classId,
      tokens: entry.tokens,
      reporters: entry.reporters.current.size + entry.reporters.previous.size,
      cells: [...entry.cells].map(([server, cell]) => ({ server, ...cell })),
    }));
  }

  private windowOf(nowMs: number): number {
    return Math.floor(nowMs / this.options.intervalMs);
  }

  /** Distinct reporters of the current and the previous interval (a lower bound: see Cell). */
  private reportsOf(cell: Cell, nowMs: number): number {
    const window = this.windowOf(nowMs);
    if (window === cell.window) return cell.previous + cell.currentNew;
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
      cell.currentNew = 0;
      cell.window = window;
    }
  }
}

/** The class's reporter sets rolled to interval `window`. */
function rollReporters(reporters: ReporterWindows, window: number): ReporterWindows {
  if (window === reporters.window) return reporters;
  reporters.previous = window === reporters.window + 1 ? reporters.current : new Set<number>();
  reporters.current = new Set<number>();
  reporters.window = window;
  return reporters;
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
    [{ result: 'repeated' }, gauges.reportsRepeated],
  ]);
  metric('webpp_client_report_rows_ignored_total', 'counter', 'Report rows ignored (a server the site does not use, a repeated or one too many).', [[{}, gauges.rowsIgnored]]);
  metric('webpp_client_aggregate_headers_total', 'counter', 'Responses that carried aggregate rows.', [[{}, gauges.headersWithRows]]);
}
