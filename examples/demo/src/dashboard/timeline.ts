/** Turns the worker's live events into the dashboard's event list: failovers, refreshes, probes. */
import type { WebppEvent } from '@webpp/sw';
import { formatDueIn, formatMs, shortUrl } from './format.js';
import type { TimelineEventView } from './model.js';

/** The events worth a line; decisions, samples and bindings updates are too chatty. */
export function toTimelineEvent(event: WebppEvent): TimelineEventView | undefined {
  const base = { atMs: event.atMs };
  switch (event.type) {
    case 'failover':
      return {
        ...base,
        id: `${event.atMs}|failover|${event.from}|${event.logicalUrl}`,
        kind: 'failover',
        server: event.from,
        detail: `${shortUrl(event.logicalUrl)}: ${describeOutcome(event.outcome, event.status)}, retried on the next replica`,
      };
    case 'server-failed':
      return {
        ...base,
        id: `${event.atMs}|failed|${event.server}`,
        kind: 'failed',
        server: event.server,
        detail: `marked failed (${describeOutcome(event.outcome)}); it gets a HEAD probe after F`,
      };
    case 'refresh':
      return {
        ...base,
        id: `${event.atMs}|refresh|${event.server}|${event.url}`,
        kind: 'refresh',
        server: event.server,
        detail: event.ok
          ? `HEAD ${shortUrl(event.url)} answered${event.status ? ` ${event.status}` : ''}${event.ttfbMs !== undefined ? ` in ${formatMs(event.ttfbMs)}` : ''} (entry had expired)`
          : `HEAD ${shortUrl(event.url)} failed${event.status ? ` (${event.status})` : ''}`,
      };
    case 'probe':
      return {
        ...base,
        id: `${event.atMs}|probe|${event.server}|${event.url}`,
        kind: event.recovered ? 'recovered' : 'probe',
        server: event.server,
        detail: event.recovered
          ? `HEAD probe ${shortUrl(event.url)} answered${event.status ? ` ${event.status}` : ''}: back in service`
          : `HEAD probe ${shortUrl(event.url)} got no answer; next probe ${event.nextProbeInMs === null ? 'not scheduled' : formatDueIn(event.nextProbeInMs)}`,
      };
    case 'bindings-rejected':
      return { ...base, id: `${event.atMs}|rejected|${event.from}`, kind: 'error', detail: `bindings header from ${shortUrl(event.from)} rejected: ${event.code}` };
    case 'control-off':
      return { ...base, id: `${event.atMs}|off|${event.from}`, kind: 'error', detail: `the site switched the worker off (${shortUrl(event.from)})` };
    case 'replica-unusable':
      return { ...base, id: `${event.atMs}|unusable|${event.server}`, kind: 'error', server: event.server, detail: `cannot be used: ${event.reason}${event.missingHeader === undefined ? '' : ` (missing ${event.missingHeader})`}; requests go to the other replicas` };
    case 'internal-error':
      return { ...base, id: `${event.atMs}|internal|${event.url}`, kind: 'error', detail: `worker fell back to a plain fetch for ${shortUrl(event.url)}: ${event.message}` };
    default:
      return undefined;
  }
}

function describeOutcome(outcome: string, status?: number): string {
  switch (outcome) {
    case 'timeout':
      return 'timed out';
    case 'network-error':
      return 'connection failed';
    case 'server-error':
      return `server error${status ? ` ${status}` : ''}`;
    case 'stale':
      return `stale binding${status ? ` (${status})` : ''}`;
    default:
      return outcome;
  }
}

/** The event list: deduplicated by id, newest first, bounded. */
export class Timeline {
  private readonly events = new Map<string, TimelineEventView>();

  constructor(readonly maxEvents = 200) {}

  add(event: TimelineEventView | undefined): boolean {
    if (!event || this.events.has(event.id)) return false;
    this.events.set(event.id, event);
    if (this.events.size > this.maxEvents) {
      const oldest = [...this.events.values()].sort((a, b) => a.atMs - b.atMs).slice(0, this.events.size - this.maxEvents);
      for (const stale of oldest) this.events.delete(stale.id);
    }
    return true;
  }

  newestFirst(): TimelineEventView[] {
    return [...this.events.values()].sort((a, b) => b.atMs - a.atMs);
  }
}
