/**
 * What the worker tells its pages: counters, the most recent decisions (which replica served
 * which logical URL) and events (failovers, refreshes, probes, bindings). Pages ask for a snapshot with postMessage; live events are batched and
 * published on a BroadcastChannel so a dashboard updates as things happen.
 */
import { EVENT_CHANNEL, EVENTS_HELLO, EVENTS_LEASE_MS, EVENTS_SUBSCRIBE } from './messages.js';
import type { DecisionRecord, WebppEvent, WorkerCounters } from './messages.js';

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
    redirectsFromOwnOrigin: 0,
    direct: 0,
    directSamples: 0,
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

export interface StateReporterOptions {
  historySize: number;
  /** Publishes a batch of events (BroadcastChannel.postMessage in the worker). */
  publish?: (events: WebppEvent[]) => void;
  /**
   * Publish only while a page subscribed (subscribe(): the broadcast channel's lease). Off:
   * every event is published (a caller's own `publish`). Default false.
   */
  onlyWhenSubscribed?: boolean;
  /** Clock of the subscription lease. Default Date.now. */
  now?: () => number;
}

/** Events kept while nobody listens, for a page whose subscription crosses its first requests. */
const BACKLOG_EVENTS = 256;
const BACKLOG_MS = 2_000;

export class StateReporter {
  readonly counters = emptyCounters();
  private readonly decisions: RingBuffer<DecisionRecord>;
  private readonly events: RingBuffer<WebppEvent>;
  private readonly publish: ((events: WebppEvent[]) => void) | undefined;
  private readonly onlyWhenSubscribed: boolean;
  private readonly now: () => number;
  private subscribedUntilMs = 0;
  private backlog: { atMs: number; event: WebppEvent }[] = [];
  private queue: WebppEvent[] = [];
  private flushScheduled = false;
  private nextDecisionId = 1;

  constructor(options: StateReporterOptions) {
    this.decisions = new RingBuffer(options.historySize);
    this.events = new RingBuffer(options.historySize);
    this.publish = options.publish;
    this.onlyWhenSubscribed = options.onlyWhenSubscribed ?? false;
    this.now = options.now ?? Date.now;
  }

  /** True when live events go out: worth building high-rate ones (samples). */
  get listening(): boolean {
    return this.publish !== undefined && (!this.onlyWhenSubscribed || this.now() < this.subscribedUntilMs);
  }

  /**
   * A page listens (EVENTS_SUBSCRIBE), for `leaseMs`. A new subscription first gets the
   * events of the last BACKLOG_MS, which its own first requests may have caused.
   */
  subscribe(leaseMs: number): void {
    const nowMs = this.now();
    const wasListening = this.listening;
    this.subscribedUntilMs = Math.max(this.subscribedUntilMs, nowMs + leaseMs);
    if (wasListening) return;
    const recent = this.backlog.filter((item) => item.atMs >= nowMs - BACKLOG_MS).map((item) => item.event);
    this.backlog = [];
    if (recent.length > 0) this.enqueue(recent);
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
    if (!this.listening) {
      // Nobody listens: no message at all, only a short backlog (no timer, no clone).
      this.backlog.push({ atMs: this.now(), event });
      if (this.backlog.length > BACKLOG_EVENTS) this.backlog.splice(0, this.backlog.length - BACKLOG_EVENTS);
      return;
    }
    this.enqueue([event]);
  }

  private enqueue(events: WebppEvent[]): void {
    this.queue.push(...events);
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

/**
 * The BroadcastChannel the page script listens to: events are posted on it, and pages
 * subscribe on it (EVENTS_SUBSCRIBE → `onSubscribe`). The channel opens just after the
 * worker's first evaluation (a task later: opening it is a tenth of that evaluation, which
 * every cold start waits for), and posts one EVENTS_HELLO so that pages already listening
 * subscribe again. Until then no page can have subscribed, so nothing is published.
 */
export function broadcastPublisher(onSubscribe: (leaseMs: number) => void): ((events: WebppEvent[]) => void) | undefined {
  if (typeof BroadcastChannel === 'undefined') return undefined;
  let channel: BroadcastChannel | undefined;
  setTimeout(() => {
    channel = new BroadcastChannel(EVENT_CHANNEL);
    channel.onmessage = (message: MessageEvent<{ type?: unknown } | null>) => {
      if (message.data?.type === EVENTS_SUBSCRIBE) onSubscribe(EVENTS_LEASE_MS);
    };
    channel.postMessage({ type: EVENTS_HELLO });
  }, 0);
  return (events) => channel?.postMessage(events);
}
