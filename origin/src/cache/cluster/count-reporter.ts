/**
 * Sends the local access counts to their homes (GOS Section 4.3): every `intervalMs` one
 * report to every peer (an empty one too: it carries this server's counters for the cluster
 * totals and probes a peer marked down), and at once for a path whose count reached the
 * threshold. At most one report per peer is in flight; counts of a report that fails go
 * back into the table and travel with the next one (to the new home if the home changed).
 * Invalidations a peer has not acknowledged are retried on the same beat.
 */
import type { CountReportEntry } from './access-counts.js';
import type { CooperativeCache } from './cooperative-cache.js';

export class CountReporter {
  private timer: NodeJS.Timeout | undefined;
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly soon = new Set<string>();
  private soonScheduled = false;
  /** Called on each beat (pending invalidation retries). */
  onBeat: (() => void) | undefined;

  constructor(
    private readonly cache: CooperativeCache,
    private readonly intervalMs: number,
  ) {}

  start(): void {
    if (this.timer !== undefined) return;
    this.timer = setInterval(() => void this.beat(), this.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await Promise.allSettled([...this.inFlight.values()]);
  }

  /** `path` reached the report threshold: report it (batched with others of the same tick). */
  reportSoon(path: string): void {
    this.soon.add(path);
    if (this.soonScheduled) return;
    this.soonScheduled = true;
    setImmediate(() => {
      this.soonScheduled = false;
      const paths = [...this.soon];
      this.soon.clear();
      const byHome = new Map<string, CountReportEntry[]>();
      for (const path of paths) {
        for (const [home, entries] of this.cache.counts.takeReports((p) => this.cache.homeOf(p), path)) {
          byHome.set(home, [...(byHome.get(home) ?? []), ...entries]);
        }
      }
      for (const [home, entries] of byHome) void this.send(home, entries);
    });
  }

  /** One periodic round: every peer gets its report (maybe empty). */
  beat(): Promise<void> {
    const reports = this.cache.counts.takeReports((path) => this.cache.homeOf(path));
    const sends = this.cache.membership.peers.map((peer) => this.send(peer, reports.get(peer) ?? []));
    this.onBeat?.();
    return Promise.all(sends).then(() => undefined);
  }

  private send(peer: string, entries: CountReportEntry[]): Promise<void> {
    if (this.inFlight.has(peer)) {
      // One at a time per peer: these counts wait for the next round.
      if (entries.length > 0) this.cache.counts.restoreReport(entries);
      return this.inFlight.get(peer) ?? Promise.resolve();
    }
    const { counters } = this.cache;
    const report = {
      entries: entries.map(([path, hits, holds]): [string, number, 0 | 1] => [path, hits, holds ? 1 : 0]),
      stats: { ...(this.cache.localCache?.counters() ?? {}), ...counters.toJSON() },
    };
    const sending = this.cache.client
      .report(peer, report)
      .then((feedback) => {
        counters.reportsSent += 1;
        this.cache.counts.applyFeedback(feedback);
      })
      .catch(() => {
        counters.reportsFailed += 1;
        if (entries.length > 0) this.cache.counts.restoreReport(entries);
      })
      .finally(() => this.inFlight.delete(peer));
    this.inFlight.set(peer, sending);
    return sending;
  }
}
