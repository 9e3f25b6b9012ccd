/**
 * Feeds time-to-first-byte samples to the latency table (paper Section 4.1: "the time to
 * receive the first byte"), measured the way the replica, not the browser, determines it.
 *
 * fetch() → response headers is not that time: Chromium sends at most six requests at a
 * time to one host, so in a burst of 40 resources most of the worker's fetches first wait
 * in the browser's queue (a 10 ms replica measured 9 → 160 ms within one page load). The
 * worker's own Resource Timing entry of each physical request has the answer:
 *
 *     sample = responseStart − requestStart
 *
 * requestStart is when the request went out on a connection, after any queueing, DNS and
 * connection setup; responseStart is its first byte. What remains is one round trip plus
 * the server's time: what selection compares replicas by. fetchStart would keep the queue
 * (the defect); connectStart would add a handshake round trip to the first request of each
 * connection only, making samples of one server bimodal. (A replica needs
 * `Timing-Allow-Origin`, which @webpp/origin sends, or its cross-origin entries carry no
 * timings; then, and where there is no Resource Timing at all, fetch() → headers is used.)
 *
 * Entries appear once a response's body is complete, so a sample waits for its entry: it
 * is matched by URL, and among overlapping requests to one URL by time (the entry started
 * after its fetch() was called and had its first byte before fetch() resolved). The entry
 * also tells HTTP-cache hits (transferSize 0 with a body): those are not samples at all.
 * A sample whose entry does not come within maxWaitMs is recorded with fetch() → headers.
 *
 * Without `Timing-Allow-Origin` (most CDNs and static hosts), fetch() → headers includes
 * the wait in the browser's per-host queue. With a ConnectionQueue (connection-queue.ts),
 * such a time is used only when the request met no queue; otherwise it is not a sample.
 *
 * Waiting reorders news: a server can fail (its body breaks off, another request times
 * out) while a sample of an earlier answer still waits for its entry. Recording that sample
 * would mark the server available again (Figure 4: a response means it is up), undoing the
 * newer failure; so a sample whose headers arrived before the server's latest failure is
 * dropped.
 */
import type { SamplePurpose, ServerId } from '@webpp/core';
import type { ConnectionQueue } from './connection-queue.js';

/** What kind of request a sample comes from (Figure 4: requests, asynchronous refreshes, probes; and hedges, resumes). */
export type SampleKind = SamplePurpose;

interface PendingSample {
  url: string;
  server: ServerId;
  kind: SampleKind;
  /** performance.now() just before fetch() was called. */
  sentAtMs: number;
  /** performance.now() when fetch() resolved with the headers. */
  headersAtMs: number;
  mayBeCached: boolean;
}

/** The body's figures from a timed entry: bytes on the wire and responseStart → responseEnd. */
export interface BodyTiming {
  bodyBytes: number;
  bodyMs: number;
}

export interface SampleSink {
  /**
   * A real network sample; `body` when the entry timed a complete body, `protocol` when the
   * entry named its connection's (nextHopProtocol: 'http/1.1', 'h2', 'h3').
   */
  record(server: ServerId, ttfbMs: number, kind: SampleKind, body?: BodyTiming, protocol?: string): void;
  /** A response that the HTTP cache served: not a sample. */
  skipped(server: ServerId): void;
  /** An untimed response (no Timing-Allow-Origin) that waited in the browser's queue: not a sample. */
  queued?(server: ServerId): void;
}

/** The parts of PerformanceResourceTiming the sampler reads. */
export interface ResourceEntryLike {
  name: string;
  startTime: number;
  requestStart: number;
  responseStart: number;
  transferSize: number;
  decodedBodySize: number;
  /** Body bytes as transferred (0 without Timing-Allow-Origin). */
  encodedBodySize?: number;
  /** When the body was complete (given with or without Timing-Allow-Origin). */
  responseEnd?: number;
  /**
   * The connection's ALPN protocol ('http/1.1', 'h2', 'h3'); empty without
   * Timing-Allow-Origin (Resource Timing guards it like the timings) and for cache hits.
   */
  nextHopProtocol?: string;
}

/** One answered physical request. */
export interface SampleInput {
  url: string;
  server: ServerId;
  kind: SampleKind;
  sentAtMs: number;
  headersAtMs: number;
  /** False when the answer cannot come from the HTTP cache (HEAD, no-store, 304). */
  mayBeCached: boolean;
}

export interface TtfbSamplerOptions {
  sink: SampleSink;
  /** Monotonic clock in ms (performance.now, the time base of the entries). */
  now: () => number;
  /** A sample whose timing entry has not arrived by then is recorded with fetch() → headers. */
  maxWaitMs?: number;
  /** Pending samples kept at most; the oldest are recorded when more arrive. */
  maxPending?: number;
  /**
   * True when the caller feeds Resource Timing entries itself through onEntry() (instead
   * of observeResourceTiming()), so samples wait for their entries.
   */
  entriesFedByCaller?: boolean;
  /**
   * The worker's own requests per host: fetch() → headers times (no Timing-Allow-Origin,
   * no Resource Timing) are used only for requests that met no queue.
   */
  queue?: ConnectionQueue;
}

/** Clock tolerance when matching an entry to its fetch (timers are coarsened to 0.1 ms). */
const MATCH_SLACK_MS = 1;

/** Resource Timing entries the worker's buffer may hold (its default is 250). */
const RESOURCE_BUFFER_SIZE = 1_000;

/** responseStart − requestStart when the entry has both, else undefined. */
export function entryTtfbMs(entry: ResourceEntryLike): number | undefined {
  if (!(entry.requestStart > 0 && entry.responseStart >= entry.requestStart)) return undefined;
  return entry.responseStart - entry.requestStart;
}

/**
 * responseEnd − startTime of an entry without timings (no Timing-Allow-Origin hides
 * requestStart and responseStart, not these), else undefined. Like fetch() → headers it
 * is never less than the time to first byte (the body ends after its first byte), so the
 * smaller of the two is the tighter bound. (Measured in Chromium 156 for small bodies in a
 * burst: the two were within a few ms of each other; neither removes the browser's own
 * overhead that a timed entry leaves out.)
 */
function untimedEntryMs(entry: ResourceEntryLike): number | undefined {
  if (entry.responseEnd === undefined || !(entry.responseEnd > 0 && entry.responseEnd >= entry.startTime)) return undefined;
  return entry.responseEnd - entry.startTime;
}

/** Bytes and responseStart → responseEnd of a timed entry with a body, else undefined (issue 11: throughput). */
function entryBody(entry: ResourceEntryLike): BodyTiming | undefined {
  const bodyBytes = entry.encodedBodySize ?? 0;
  if (!(bodyBytes > 0 && entry.responseStart > 0 && entry.responseEnd !== undefined && entry.responseEnd >= entry.responseStart)) return undefined;
  return { bodyBytes, bodyMs: entry.responseEnd - entry.responseStart };
}

export class TtfbSampler {
  private readonly pending = new Map<string, PendingSample[]>();
  private pendingCount = 0;
  private readonly sink: SampleSink;
  private readonly now: () => number;
  private readonly maxWaitMs: number;
  private readonly maxPending: number;
  private observing = false;
  private readonly queue: ConnectionQueue | undefined;
  /** performance.now() of each server's latest failure. */
  private readonly failedAtMs = new Map<ServerId, number>();

  constructor(options: TtfbSamplerOptions) {
    this.sink = options.sink;
    this.now = options.now;
    this.maxWaitMs = options.maxWaitMs ?? 10_000;
    this.maxPending = options.maxPending ?? 256;
    this.observing = options.entriesFedByCaller ?? false;
    this.queue = options.queue;
  }

  /**
   * Starts watching the worker's own Resource Timing entries. Returns false where the
   * platform has none; samples are then recorded at once, from fetch() → headers.
   *
   * The observer itself starts a task later, off the worker's first evaluation, which every
   * cold start waits for (issue 26); `buffered` hands it the entries of requests sent before.
   * The buffer never fills: the observer receives every entry whether or not the buffer
   * has room, and empties the buffer after each delivery; a larger buffer and a
   * buffer-full handler cover bursts between two deliveries.
   */
  observeResourceTiming(): boolean {
    const Observer = (globalThis as { PerformanceObserver?: typeof PerformanceObserver }).PerformanceObserver;
    const perf = (globalThis as { performance?: Performance }).performance;
    if (!Observer || !perf || !Observer.supportedEntryTypes?.includes('resource')) return false;
    this.observing = true;
    setTimeout(() => {
      try {
        perf.setResourceTimingBufferSize?.(RESOURCE_BUFFER_SIZE);
        perf.addEventListener?.('resourcetimingbufferfull', () => perf.clearResourceTimings());
        new Observer((list) => {
          this.onEntries(list.getEntries() as unknown as ResourceEntryLike[]);
          perf.clearResourceTimings?.();
        }).observe({ type: 'resource', buffered: true });
      } catch {
        this.observing = false;
      }
    }, 0);
    return true;
  }

  /** The server was just marked failed: pending samples of earlier answers are older news. */
  noteFailure(server: ServerId): void {
    this.failedAtMs.set(server, this.now());
  }

  /** A physical request was answered: record its sample, or wait for its timing entry. */
  add(input: SampleInput): void {
    if (!this.observing) {
      this.recordFetchTimed({ ...input });
      return;
    }
    this.expire();
    const sample: PendingSample = { ...input };
    const queue = this.pending.get(input.url);
    if (queue) queue.push(sample);
    else this.pending.set(input.url, [sample]);
    this.pendingCount++;
    if (this.pendingCount > this.maxPending) this.expire();
  }

  /**
   * A batch of entries, as the observer delivers them: every body they complete frees its
   * connection first, then the samples are judged (an earlier request's entry may come
   * after a later one's in the same batch).
   */
  onEntries(entries: readonly ResourceEntryLike[]): void {
    for (const entry of entries) this.queue?.onEntry({ name: entry.name, startTime: entry.startTime, responseEnd: entry.responseEnd ?? 0 });
    for (const entry of entries) this.matchEntry(entry);
  }

  /** Matches a Resource Timing entry with the pending sample of the same fetch, and records it. */
  onEntry(entry: ResourceEntryLike): void {
    this.onEntries([entry]);
  }

  private matchEntry(entry: ResourceEntryLike): void {
    const queue = this.pending.get(entry.name);
    if (!queue) return;
    const index = matchIndex(queue, entry);
    if (index === -1) return;
    const [sample] = queue.splice(index, 1) as [PendingSample];
    if (queue.length === 0) this.pending.delete(entry.name);
    this.pendingCount--;
    // transferSize is 0 for a cache hit; a cross-origin entry without Timing-Allow-Origin
    // reports 0 sizes throughout, which says nothing, so it counts as a network sample.
    if (sample.mayBeCached && entry.transferSize === 0 && entry.decodedBodySize > 0) {
      this.sink.skipped(sample.server);
      return;
    }
    const ttfbMs = entryTtfbMs(entry);
    const protocol = entry.nextHopProtocol || undefined;
    if (ttfbMs === undefined) this.recordFetchTimed(sample, untimedEntryMs(entry), protocol);
    else this.record(sample, ttfbMs, entryBody(entry), protocol);
  }

  /** Records, from fetch() → headers, samples whose entries are overdue (or beyond the pending bound). */
  expire(): void {
    if (this.pendingCount === 0) return;
    const deadline = this.now() - this.maxWaitMs;
    for (const [url, queue] of this.pending) {
      while (queue.length > 0 && ((queue[0] as PendingSample).headersAtMs < deadline || this.pendingCount > this.maxPending)) {
        const sample = queue.shift() as PendingSample;
        this.pendingCount--;
        this.recordFetchTimed(sample);
      }
      if (queue.length === 0) this.pending.delete(url);
    }
  }

  /**
   * fetch() → headers, unless the request waited in the browser's queue for its host. Only
   * with Resource Timing: its entries are what tells the queue that a body is complete.
   * An untimed entry's duration bounds it too (see untimedEntryMs): the smaller is used.
   */
  private recordFetchTimed(sample: PendingSample, entryDurationMs?: number, protocol?: string): void {
    if (this.observing && this.queue?.metNoQueue(sample.url, sample.sentAtMs) === false) {
      this.sink.queued?.(sample.server);
      return;
    }
    const fetchTimedMs = sample.headersAtMs - sample.sentAtMs;
    this.record(sample, entryDurationMs === undefined ? fetchTimedMs : Math.min(fetchTimedMs, entryDurationMs), undefined, protocol);
  }

  private record(sample: PendingSample, ttfbMs: number, body?: BodyTiming, protocol?: string): void {
    const failedAtMs = this.failedAtMs.get(sample.server);
    if (failedAtMs !== undefined && sample.headersAtMs < failedAtMs) return; // older than the failure
    this.sink.record(sample.server, ttfbMs, sample.kind, body, protocol);
  }
}

/**
 * The pending fetch an entry belongs to: the entry began after fetch() was called and had
 * its first byte before fetch() resolved; among several such overlapping fetches of one
 * URL, the one called closest before the entry began. -1 when none fits.
 */
function matchIndex(queue: readonly PendingSample[], entry: ResourceEntryLike): number {
  let best = -1;
  let bestGapMs = Infinity;
  queue.forEach((sample, index) => {
    const gapMs = entry.startTime - sample.sentAtMs;
    if (gapMs < -MATCH_SLACK_MS || entry.startTime > sample.headersAtMs + MATCH_SLACK_MS) return;
    if (entry.responseStart > 0 && entry.responseStart > sample.headersAtMs + MATCH_SLACK_MS) return;
    if (Math.abs(gapMs) < bestGapMs) {
      best = index;
      bestGapMs = Math.abs(gapMs);
    }
  });
  return best;
}
