/**
 * The messages between the worker and its pages: the state snapshot a page asks for, and
 * the live events the worker broadcasts. Types only (plus names), so that the page script
 * stays tiny: it imports nothing at run time from here but the constants.
 */
import type { AttemptOutcome as EngineAttemptOutcome, AttemptRecord as EngineAttemptRecord, LatencyTableJSON, SelectionConfig, ServerId, ServerState } from '@webpp/core';
import type { PushedLoadView } from './pushed-load.js';
import type { ClientAggregateView } from './client-aggregate.js';

/** BroadcastChannel on which the worker publishes live events (batched arrays of WebppEvent). */
export const EVENT_CHANNEL = 'webpp';

/**
 * Subscription to the live events, on EVENT_CHANNEL itself: a page that listens posts
 * `{type: EVENTS_SUBSCRIBE}` when it starts listening, again every EVENTS_LEASE_MS / 3, and
 * in answer to the `{type: EVENTS_HELLO}` a worker posts when it starts. The worker publishes
 * only while a subscription is live (the lease), so pages without a listener cost nothing.
 */
export const EVENTS_SUBSCRIBE = 'webpp:subscribe';
export const EVENTS_HELLO = 'webpp:hello';
export const EVENTS_LEASE_MS = 60_000;

/** Message types a page sends to the worker; the answer arrives on the transferred MessagePort. */
export const STATE_REQUEST = 'webpp:state';
/**
 * Write the state now; answered with `true` once written. Sent without a port, it is the page
 * script's own request (after its load, when hidden), which waits while another page loads.
 */
export const FLUSH_REQUEST = 'webpp:flush';
/** Where to load the page's <object>/<embed> elements from (embed-relocation.ts); answer: (string | null)[]. */
export const RELOCATE_REQUEST = 'webpp:relocate';
/** Page → worker: the page's Resource Timing entries and failed elements (direct.ts), no answer. */
export const PAGE_TIMING_MESSAGE = 'webpp:timing';

/** Sent by the worker to every open page (client.postMessage) when the site switched it off. */
export const CONTROL_OFF_MESSAGE = 'webpp:control-off';

/** Sent by the worker to every open page once per session for a replica it cannot use (unusable-replicas.ts). */
export const REPLICA_UNUSABLE_MESSAGE = 'webpp:replica-unusable';

/** The message of REPLICA_UNUSABLE_MESSAGE: the replica, the request that showed it, why, and the header it lacks. */
export interface ReplicaUnusableMessage {
  type: typeof REPLICA_UNUSABLE_MESSAGE;
  server: string;
  url: string;
  reason: string;
  missingHeader?: string;
}


/**
 * How one attempt of a bound request ended: the engine's outcomes (packages/core,
 * engine-io.ts). 'served': a usable response (2xx, 3xx, or 4xx other than 404/410);
 * 'timeout': no response head within the attempt's timeout (paper Section 4.1), server marked
 * failed; 'network-error': refused or reset, CORS failure, integrity mismatch…, server marked
 * failed; 'server-error': a 5xx, server marked failed; 'stale': 404 or 410, the binding is
 * stale; 'cancelled': another attempt answered first; 'aborted': the page gave up.
 */
export type AttemptOutcome = EngineAttemptOutcome;

/** One attempt of a bound request: the engine's record (packages/core, engine-io.ts); `target` is the replica's URL. */
export type AttemptRecord = EngineAttemptRecord;

/** One bound request: which replica served which logical URL, and what was tried. */
export interface DecisionRecord {
  id: number;
  /** Wall-clock time the request arrived. */
  atMs: number;
  logicalUrl: string;
  method: string;
  /** Request destination ('document', 'image', 'script', '' for fetch()…). */
  destination: string;
  navigation: boolean;
  outcome: 'served' | 'failed' | 'aborted';
  /** The server whose response the page got, if any. */
  servedBy?: ServerId;
  physicalUrl?: string;
  status?: number;
  /** True when at least one attempt failed before the one that served. */
  failover: boolean;
  attempts: AttemptRecord[];
  /** Time spent choosing replicas, before the first byte was requested. */
  bindMs: number;
  /** Arrival to response headers handed to the page. */
  totalMs: number;
  /**
   * Time the worker itself spent on the request: totalMs minus the serving replica's time
   * to first byte (choosing, building the request, reading headers, re-wrapping). Failed
   * attempts count as waiting, not as worker time.
   */
  workerMs: number;
  policy: string;
}

/** One server's row of the latency table, with the figures a dashboard shows. */
export interface ServerView {
  server: ServerId;
  state: ServerState;
  meanMs: number;
  stdDevMs: number;
  /** Eq. (1) of the paper: what selection minimises. Null without samples. */
  sPercentileMs: number | null;
  /** The T-percentile timeout the next request to it would get. */
  timeoutMs: number;
  sampleCount: number;
  /** Age of the newest sample; null without samples. */
  lastSampleAgeMs: number | null;
  /** No sample within TTL: due for an asynchronous HEAD refresh. */
  expired: boolean;
  /** Current F (doubles per probe while failed). */
  probeIntervalMs: number;
  /** While failed: time until the next probe is due (0 = due now). Null while available. */
  nextProbeInMs: number | null;
  /** The webpp policy's body throughput estimate (bytes/ms), once a body of the server was timed. */
  throughputBytesPerMs?: number | undefined;
  /** The protocol its answers came over ('http/1.1', 'h2', 'h3': Resource Timing's nextHopProtocol), once known. */
  protocol?: string | undefined;
}

export interface WorkerCounters {
  /** GET/HEAD requests the worker answered (bound, observed or passed on). */
  intercepted: number;
  /** Requests bound to a replica. */
  bound: number;
  /** Same-origin requests fetched as they were, only to read their bindings header. */
  observed: number;
  /** Bound requests that some replica served. */
  served: number;
  /** Bound requests that no replica could serve. */
  failed: number;
  /** Attempts that failed and handed over to the next replica. */
  failovers: number;
  /** 404/410 answers: stale bindings. */
  staleBindings: number;
  /** Asynchronous HEAD refreshes sent (paper Section 4.1, TTL). */
  refreshes: number;
  /** Asynchronous HEAD probes sent to failed servers (F doubling). */
  probes: number;
  /** Probes answered: a failed server is back. */
  recoveries: number;
  /** TTFB samples folded into the latency table. */
  samples: number;
  /** Responses that came from the HTTP cache and were therefore not samples. */
  cacheHitsSkipped: number;
  /** Untimed responses (no Timing-Allow-Origin) that waited in the browser's per-host queue: not samples. */
  queuedSamplesSkipped: number;
  /** Bindings headers accepted / rejected as malformed. */
  bindingsHeadersAccepted: number;
  bindingsHeadersRejected: number;
  /** Internal errors that made the worker fall back to a plain fetch (fail open). */
  internalErrors: number;
  /** Latency-table writes to IndexedDB (batched). */
  tableFlushes: number;
  /** Response bodies that broke off mid-stream and were resumed (or not) from another replica. */
  bodyResumes: number;
  /** Page-script (/webpp.js) requests answered from the worker's cached copy. */
  pageScriptFromCache: number;
  /** Control headers (`webpp-control: off`) from a replica, ignored (trust rule, docs/protocol.md). */
  untrustedHeaders: number;
  /** Binding rows from a replica dropped by the trust rule. */
  untrustedBindings: number;
  /** Replica bodies checked against the own origin's SHA-256 digest and found right (before the page saw them, or at their end). */
  bodiesVerified: number;
  /** Replica bodies that did not match the own origin's SHA-256 digest. */
  integrityFailures: number;
  /** Requests answered with an offline copy because every replica failed (offline-cache.ts). */
  offlineCopies: number;
  /** Answers meant for one user that a replica on another origin gave, replaced by the own origin's (own-origin-answers.ts). */
  personalFromOwnOrigin: number;
  /** Redirects a replica answered with, replaced by the own origin's answer to the page's own request (own-origin-answers.ts). */
  redirectsFromOwnOrigin: number;
  /** Bound requests left to the browser: the own origin was the plan's sole first choice (direct.ts). */
  direct: number;
  /** Samples of the own origin from the pages' Resource Timing of those requests. */
  directSamples: number;
}

export interface WorkerStateSnapshot {
  type: 'webpp:state';
  /** Version of @webpp/sw that runs in the worker. */
  version: string;
  /** False once switched off (CONTROL_HEADER: off). */
  enabled: boolean;
  startedAtMs: number;
  nowMs: number;
  policy: string;
  preset: string;
  config: SelectionConfig;
  /** Problems found in the configuration (the worker then runs with the preset). */
  configErrors: string[];
  bindings: { count: number; directoryVersion: number };
  servers: ServerView[];
  table: LatencyTableJSON;
  counters: WorkerCounters;
  /** Most recent bound requests, newest last. */
  decisions: DecisionRecord[];
  /** Most recent failovers, refreshes, probes and other events, newest last. */
  events: WebppEvent[];
  /** Offline copies (offline-cache.ts): what is kept, and how often it answered. */
  offline: { enabled: boolean; entries: number; bytes: number; saved: number; servedFromCache: number; lastAtMs: number | null };
  /** Service times the servers pushed (Server-Timing, webpp-load), newest per server (pushed-load.ts). */
  pushed: PushedLoadView[];
  /** The client aggregate for first visits (client-aggregate.ts); absent in older snapshots. */
  aggregate?: ClientAggregateView;
}

interface EventBase {
  atMs: number;
}

export type WebppEvent =
  | (EventBase & { type: 'decision'; decision: DecisionRecord })
  | (EventBase & { type: 'failover'; logicalUrl: string; from: ServerId; outcome: AttemptOutcome; status?: number })
  | (EventBase & { type: 'server-failed'; server: ServerId; outcome: AttemptOutcome })
  | (EventBase & { type: 'sample'; server: ServerId; ttfbMs: number; kind: 'request' | 'refresh' | 'probe'; view: ServerView })
  | (EventBase & { type: 'refresh'; server: ServerId; url: string; ok: boolean; status?: number; ttfbMs?: number })
  | (EventBase & { type: 'probe'; server: ServerId; url: string; recovered: boolean; status?: number; nextProbeInMs: number | null })
  | (EventBase & { type: 'bindings'; count: number; directoryVersion: number; applied: number; from: string })
  | (EventBase & { type: 'bindings-rejected'; code: string; message: string; from: string })
  | (EventBase & { type: 'control-off'; from: string })
  | (EventBase & {
      type: 'body-resumed';
      logicalUrl: string;
      /** The server whose body broke off, and the byte (of the representation) it broke at. */
      from: ServerId;
      atByte: number;
      /** The server that sent the rest, when one could. */
      to?: ServerId;
      ok: boolean;
      /** Why the body could not be resumed. */
      reason?: string;
    })
  /**
   * Decided again at the response head (engine-hooks.ts): a second fetch of the body went to
   * `to`; `switched` when the page's bytes came from it from byte `atByte` on.
   */
  | (EventBase & {
      type: 'head-redecided';
      logicalUrl: string;
      from: ServerId;
      to: ServerId;
      switched: boolean;
      reason: string;
      atByte: number;
      /** The policy's estimates at the head: the rest of the body on `from`, a whole fetch on `to` (ms). */
      restHereMs: number;
      elsewhereMs: number;
    })
  | (EventBase & { type: 'internal-error'; message: string; url: string })
  /** A replica sent a header only the site's own origin may send (trust rule): ignored. */
  | (EventBase & { type: 'untrusted-header'; header: 'webpp-control'; server: ServerId; from: string })
  /** Binding rows of a replica's header that the trust rule dropped (the first 8, and how many). */
  | (EventBase & {
      type: 'untrusted-bindings';
      server: ServerId;
      from: string;
      dropped: { logical: string; reason: 'foreign-logical-url' | 'unknown-server'; server?: ServerId }[];
      droppedCount: number;
    })
  /**
   * A replica's body did not match the own origin's SHA-256 digest. `streamed`: false when
   * caught before the page saw a byte (the request failed over), true when caught at the end
   * of a large body (the page's read failed).
   */
  | (EventBase & { type: 'integrity-failure'; server: ServerId; logicalUrl: string; expected: string; actual: string; streamed: boolean })
  /** A replica the worker cannot use (no CORS header, an opaque or redirected answer), once per worker session. */
  | (EventBase & { type: 'replica-unusable'; server: ServerId; url: string; reason: string; missingHeader?: string })
  /** Every replica failed and the page got the copy of `logicalUrl` saved at savedAtMs. */
  | (EventBase & { type: 'offline-copy'; logicalUrl: string; savedAtMs: number });

export type WebppEventType = WebppEvent['type'];
