/**
 * What the worker tells its pages: counters, the most recent decisions (which replica served
 * which logical URL) and events (failovers, refreshes, probes, bindings), plus a view of the
 * latency table. Pages ask for a snapshot with postMessage; live events are batched and
 * published on a BroadcastChannel so a dashboard updates as things happen.
 */
import type { LatencyTable, ServerId } from '@webpp/core';
import { EVENT_CHANNEL } from './messages.js';
import type { DecisionRecord, ServerView, WebppEvent, WorkerCounters } from './messages.js';

function emptyCounters(): WorkerCounters {
  return {
    intercepted: 0,
    bound: 0,
    observed: 0,
    served: 0,
    failed: 0,
    failovers: 0,
    staleBindings: 0,
    refreshes: 0,
    probes: 0,
    recoveries: 0,
    samples: 0,
    cacheHitsSkipped: 0,
    queuedSamplesSkipped: 0,
    bindingsHeadersAccepted: 0,
    bindingsHeadersRejected: 0,
    internalErrors: 0,
    tableFlushes: 0,
    bodyResumes: 0,
    pageScriptFromCache: 0,
    untrustedHeaders: 0,
    untrustedBindings: 0,
    bodiesVerified: 0,
    integrityFailures: 0,
    offlineCopies: 0,
    personalFromOwnOrigin: 0,
  };
}

/** A fixed-size FIFO: the oldest item goes when a new one comes. */
export class RingBuffer<T> {
  private readonly items: T[] = [];
  constructor(private readonly capacity: number) {}
  push(item: T): void {
    this.items.push(item);
    if (this.items.length > this.capacity) this.items.shift();
  }
  toArray(): T[] {
    return [...this.items];
  }
}

/** One row of the table, with derived figures. */
export function serverView(table: LatencyTable, server: ServerId, nowMs: number): ServerView | undefined {
  const row = table.get(server);
  if (!row) return undefined;
  const sPercentileMs = table.sPercentileMs(server);
  return {
    server,
    state: row.state,
    meanMs: round(row.meanMs),
    stdDevMs: round(Math.sqrt(row.varianceMs2)),
    sPercentileMs: Number.isFinite(sPercentileMs) ? round(sPercentileMs) : null,
    timeoutMs: table.timeoutMs(server),
    sampleCount: row.sampleCount,
    lastSampleAgeMs: row.sampleCount > 0 ? Math.max(0, nowMs - row.lastSampleAtMs) : null,
    expired: table.isExpired(server),
    probeIntervalMs: row.probeIntervalMs,
    nextProbeInMs: row.state === 'failed' ? Math.max(0, row.nextProbeAtMs - nowMs) : null,
  };
}

export function serverViews(table: LatencyTable, nowMs: number): ServerView[] {
  return table
    .servers()
    .sort()
    .map((server) => serverView(table, server, nowMs))
    .filter((view): view is ServerView => view !== undefined);
}

function round(value: number): number {
  return Math.round(value * 100) / 100;
}

export interface StateReporterOptions {
  historySize: number;
  /** Publishes a batch of events (BroadcastChannel.postMessage in the worker). */
  publish?: (events: WebppEvent[]) => void;
}

export class StateReporter {
  readonly counters = emptyCounters();
  private readonly decisions: RingBuffer<DecisionRecord>;
  private readonly events: RingBuffer<WebppEvent>;
  private readonly publish: ((events: WebppEvent[]) => void) | undefined;
  private queue: WebppEvent[] = [];
  private flushScheduled = false;
  private nextDecisionId = 1;

  constructor(options: StateReporterOptions) {
    this.decisions = new RingBuffer(options.historySize);
    this.events = new RingBuffer(options.historySize);
    this.publish = options.publish;
  }

  decisionId(): number {
    return this.nextDecisionId++;
  }

  count(counter: keyof WorkerCounters, by = 1): void {
    this.counters[counter] += by;
  }

  decision(decision: DecisionRecord): void {
    this.decisions.push(decision);
    this.send({ type: 'decision', atMs: decision.atMs, decision });
  }

  /** Records a notable event (kept for snapshots) and publishes it. */
  event(event: WebppEvent): void {
    this.events.push(event);
    this.send(event);
  }

  /** Publishes without keeping (high-rate events such as samples). */
  send(event: WebppEvent): void {
    if (!this.publish) return;
    this.queue.push(event);
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    // One message per burst: a page load's 50 decisions cost a handful of posts, off the hot path.
    setTimeout(() => this.flushEvents(), 0);
  }

  flushEvents(): void {
    this.flushScheduled = false;
    const batch = this.queue;
    this.queue = [];
    if (batch.length === 0 || !this.publish) return;
    try {
      this.publish(batch);
    } catch {
      // A page that cannot receive events must not disturb the worker.
    }
  }

  recentDecisions(): DecisionRecord[] {
    return this.decisions.toArray();
  }

  recentEvents(): WebppEvent[] {
    return this.events.toArray();
  }
}

/** Publishes event batches on the BroadcastChannel the page script listens to, opened on first use. */
export function broadcastPublisher(): ((events: WebppEvent[]) => void) | undefined {
  if (typeof BroadcastChannel === 'undefined') return undefined;
  let channel: BroadcastChannel | undefined;
  return (events) => {
    channel ??= new BroadcastChannel(EVENT_CHANNEL);
    channel.postMessage(events);
  };
}
