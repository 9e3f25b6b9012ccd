/**
 * Why the worker failed over, from its event log: each `failover` event by the outcome of
 * the attempt that failed (timeout, network-error, server-error…), and each `body-resumed`
 * event by whether another replica sent the rest. The snapshot keeps the latest events
 * (a ring buffer), so the bench reads it after every page load and keeps only the new ones.
 */
import type { WebppEvent } from './worker-counters.js';

export class EventTally {
  readonly failoversByOutcome: Record<string, number> = {};
  readonly failoversFrom: Record<string, number> = {};
  readonly bodyResumes = { ok: 0, failed: 0 };
  private lastAtMs = 0;
  private seenAtLast = new Set<string>();

  /** Folds in a snapshot's events; with `count` false, only marks them as seen (events from before the loop). */
  add(events: readonly WebppEvent[], count = true): void {
    const fresh = !count ? [] : events.filter((event) => event.atMs > this.lastAtMs || (event.atMs === this.lastAtMs && !this.seenAtLast.has(JSON.stringify(event))));
    for (const event of fresh) {
      if (event.type === 'failover') {
        this.failoversByOutcome[event.outcome] = (this.failoversByOutcome[event.outcome] ?? 0) + 1;
        this.failoversFrom[event.from] = (this.failoversFrom[event.from] ?? 0) + 1;
      } else if (event.type === 'body-resumed') {
        this.bodyResumes[event.ok ? 'ok' : 'failed'] += 1;
      }
    }
    const newestAtMs = Math.max(this.lastAtMs, ...events.map((event) => event.atMs));
    if (newestAtMs !== this.lastAtMs) this.seenAtLast = new Set();
    this.lastAtMs = newestAtMs;
    for (const event of events) if (event.atMs === newestAtMs) this.seenAtLast.add(JSON.stringify(event));
  }
}
