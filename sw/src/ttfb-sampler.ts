/**
 * Feeds time-to-first-byte samples to the latency table, leaving out HTTP-cache hits (a
 * cached answer says nothing about the server; paper Section 4.1 measures "the time to
 * receive the first byte"). fetch() does not say whether the cache answered, but the
 * worker's Resource Timing entries do: a cache hit has `transferSize === 0` with a body.
 * Those entries appear once the body has been read, so a sample waits for its entry and is
 * then recorded or dropped. Without Resource Timing (or for requests that cannot be cache
 * hits, such as `cache: 'no-store'` probes) samples are recorded at once.
 */
import type { ServerId } from '@webpp/core';

interface PendingSample {
  server: ServerId;
  ttfbMs: number;
  queuedAtMs: number;
}

export interface SampleSink {
  /** A real network sample. */
  record(server: ServerId, ttfbMs: number): void;
  /** A response that the HTTP cache served: not a sample. */
  skipped(server: ServerId): void;
}

/** Minimal view of PerformanceResourceTiming the sampler needs. */
export interface ResourceEntryLike {
  name: string;
  transferSize: number;
  decodedBodySize: number;
}

export interface TtfbSamplerOptions {
  sink: SampleSink;
  /** Monotonic clock in ms (performance.now). */
  now: () => number;
  /** A sample whose timing entry has not arrived by then is recorded anyway. */
  maxWaitMs?: number;
  /** Pending samples kept at most; the oldest are recorded when more arrive. */
  maxPending?: number;
  /**
   * True when the caller feeds Resource Timing entries itself through onEntry() (instead
   * of observeResourceTiming()), so samples wait for their entries.
   */
  entriesFedByCaller?: boolean;
}

export class TtfbSampler {
  private readonly pending = new Map<string, PendingSample[]>();
  private pendingCount = 0;
  private readonly sink: SampleSink;
  private readonly now: () => number;
  private readonly maxWaitMs: number;
  private readonly maxPending: number;
  private observing = false;

  constructor(options: TtfbSamplerOptions) {
    this.sink = options.sink;
    this.now = options.now;
    this.maxWaitMs = options.maxWaitMs ?? 10_000;
    this.maxPending = options.maxPending ?? 256;
    this.observing = options.entriesFedByCaller ?? false;
  }

  /**
   * Starts watching the worker's own Resource Timing entries. Returns false where the
   * platform has none; samples are then recorded immediately.
   */
  observeResourceTiming(): boolean {
    const Observer = (globalThis as { PerformanceObserver?: typeof PerformanceObserver }).PerformanceObserver;
    if (!Observer || !Observer.supportedEntryTypes?.includes('resource')) return false;
    try {
      new Observer((list) => {
        for (const entry of list.getEntries()) this.onEntry(entry as unknown as ResourceEntryLike);
        // The observer has the entries; keep the global buffer from filling up.
        performance.clearResourceTimings?.();
      }).observe({ type: 'resource' });
      this.observing = true;
    } catch {
      this.observing = false;
    }
    return this.observing;
  }

  /** A response arrived `ttfbMs` after its fetch() started. */
  add(url: string, server: ServerId, ttfbMs: number, mayBeCached: boolean): void {
    if (!this.observing || !mayBeCached) {
      this.sink.record(server, ttfbMs);
      return;
    }
    this.expire();
    const queue = this.pending.get(url);
    const sample = { server, ttfbMs, queuedAtMs: this.now() };
    if (queue) queue.push(sample);
    else this.pending.set(url, [sample]);
    this.pendingCount++;
  }

  /** Matches a Resource Timing entry with the oldest pending sample of its URL. */
  onEntry(entry: ResourceEntryLike): void {
    const queue = this.pending.get(entry.name);
    const sample = queue?.shift();
    if (!queue || !sample) return;
    if (queue.length === 0) this.pending.delete(entry.name);
    this.pendingCount--;
    // transferSize is 0 for a cache hit; a cross-origin entry without Timing-Allow-Origin
    // reports 0 sizes throughout, which says nothing, so it counts as a network sample.
    if (entry.transferSize === 0 && entry.decodedBodySize > 0) this.sink.skipped(sample.server);
    else this.sink.record(sample.server, sample.ttfbMs);
  }

  /** Records samples whose entries are overdue (or beyond the pending bound). */
  expire(): void {
    if (this.pendingCount === 0) return;
    const deadline = this.now() - this.maxWaitMs;
    for (const [url, queue] of this.pending) {
      while (queue.length > 0 && ((queue[0] as PendingSample).queuedAtMs < deadline || this.pendingCount >= this.maxPending)) {
        const sample = queue.shift() as PendingSample;
        this.pendingCount--;
        this.sink.record(sample.server, sample.ttfbMs);
      }
      if (queue.length === 0) this.pending.delete(url);
    }
  }
}
