/**
 * The load table: per resource, hits and bytes over a sliding window (DCWS's local
 * document graph tuple, Baker and Moon 1998, Section 3.3: Name, Location, Size, Hits), and
 * per server requests/s, bytes/s and utilisation (the global load table: this server's own
 * figures here, its peers' from their load records).
 *
 * The counting is LoadStats' (stats/load-stats.ts, fed by every response): this table keeps
 * samples of its cumulative counters, one every `windowMs / buckets`, and a window's hits
 * are the difference between now and the oldest sample inside the window:
 *   hits(r) = requests_now(r) − requests_then(r),  rate = hits / (now − then).
 * A resource that LoadStats dropped and counts again from 0 gets its current count.
 */
import type { LoadStats } from '../stats/load-stats.js';
import type { HotResource } from '../sync/load-record.js';
import type { OwnLoad } from '../sync/peer-state.js';

interface Counts {
  requests: number;
  bytes: number;
  /** The resource's size as last answered (LoadStats); undefined until known. */
  sizeBytes?: number | undefined;
}

interface Sample {
  atMs: number;
  total: Counts;
  resources: Map<string, Counts>;
}

/** One resource's row: DCWS's (Name, Size, Hits) tuple, plus bytes. */
export interface ResourceRow extends HotResource {
  requestsPerSecond: number;
}

export interface WindowTotals {
  /** Span the figures cover (up to windowMs; shorter right after start). */
  spanMs: number;
  hits: number;
  bytes: number;
  requestsPerSecond: number;
  bytesPerSecond: number;
}

export interface LoadTableOptions {
  stats: LoadStats;
  windowMs: number;
  /** Samples per window (the window slides by windowMs / buckets). */
  buckets: number;
  /** This server's utilisation in [0, 1] (stats/utilisation.ts: the busy share it also pushes). */
  utilisation: () => number;
  clock?: () => number;
}

function countsOf(stats: LoadStats): { total: Counts; resources: Map<string, Counts> } {
  const snapshot = stats.snapshot();
  return {
    total: { requests: snapshot.total.requests, bytes: snapshot.total.bytes },
    resources: new Map(snapshot.resources.map((row) => [row.resource, { requests: row.requests, bytes: row.bytes, sizeBytes: row.sizeBytes }])),
  };
}

export class LoadTable {
  private readonly clock: () => number;
  private readonly samples: Sample[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly options: LoadTableOptions) {
    if (!(options.windowMs > 0) || !(options.buckets >= 1)) throw new RangeError('windowMs must be > 0 and buckets >= 1');
    this.clock = options.clock ?? Date.now;
    this.sample();
  }

  /** Samples on a timer, so that the window stays a window when nobody asks for a while. */
  start(): void {
    if (this.timer !== undefined) return;
    this.timer = setInterval(() => this.sample(), this.options.windowMs / this.options.buckets);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }

  get windowMs(): number {
    return this.options.windowMs;
  }

  /** Takes a sample when one is due (call it at least every windowMs / buckets). */
  sample(): void {
    const nowMs = this.clock();
    const last = this.samples.at(-1);
    if (last !== undefined && nowMs - last.atMs < this.options.windowMs / this.options.buckets) return;
    this.samples.push({ atMs: nowMs, ...countsOf(this.options.stats) });
    // Keep the newest sample that is at least a window old (the baseline), and all after it.
    while (this.samples.length > 1 && (this.samples[1] as Sample).atMs <= nowMs - this.options.windowMs) this.samples.shift();
  }

  /** Every resource with hits in the window, most hits first (ties: by path). */
  resources(): ResourceRow[] {
    this.sample();
    const { baseline, spanMs, now } = this.window();
    const rows: ResourceRow[] = [];
    for (const [path, current] of now.resources) {
      const then = baseline.resources.get(path);
      const counted = then === undefined || then.requests > current.requests ? current : { requests: current.requests - then.requests, bytes: current.bytes - then.bytes };
      if (counted.requests <= 0) continue;
      rows.push({
        path,
        hits: counted.requests,
        bytes: counted.bytes,
        // The size last answered; bytes per request only when no answer told it (those understate it).
        sizeBytes: current.sizeBytes ?? Math.round(counted.bytes / counted.requests),
        requestsPerSecond: (counted.requests * 1000) / spanMs,
      });
    }
    return rows.sort((a, b) => b.hits - a.hits || (a.path < b.path ? -1 : 1));
  }

  /** This server's requests and bytes over the window. */
  totals(): WindowTotals {
    this.sample();
    const { baseline, spanMs, now } = this.window();
    const hits = Math.max(0, now.total.requests - baseline.total.requests);
    const bytes = Math.max(0, now.total.bytes - baseline.total.bytes);
    return { spanMs, hits, bytes, requestsPerSecond: (hits * 1000) / spanMs, bytesPerSecond: (bytes * 1000) / spanMs };
  }

  /** This server's figures for its load record: totals, utilisation, the `hotCount` hottest resources. */
  ownLoad(hotCount: number): OwnLoad {
    const totals = this.totals();
    return {
      requestsPerSecond: totals.requestsPerSecond,
      bytesPerSecond: totals.bytesPerSecond,
      utilisation: this.options.utilisation(),
      hot: this.resources()
        .slice(0, hotCount)
        .map(({ path, hits, bytes, sizeBytes }) => ({ path, hits, bytes, sizeBytes })),
    };
  }

  private window(): { baseline: Sample; spanMs: number; now: Sample } {
    const nowMs = this.clock();
    const baseline = this.samples[0] as Sample;
    const now = { atMs: nowMs, ...countsOf(this.options.stats) };
    // At least one bucket, so that a fresh table does not report huge rates.
    const spanMs = Math.max(nowMs - baseline.atMs, this.options.windowMs / this.options.buckets);
    return { baseline, spanMs, now };
  }
}
