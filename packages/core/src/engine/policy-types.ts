/**
 * The contract between the client engine (packages/core/src/engine) and a replica-selection
 * policy (packages/core/src/policies). A policy only decides: which servers to ask, in which
 * order, with which timeouts and hedges, and which background requests to send. The engine
 * runs the attempts (timeouts, hedges, failover, deadline, fallback) and feeds every
 * measurement back through `observe`. All times are the engine's injected clock (ms), never
 * Date.now() inside a policy.
 */
import type { ServerId } from '../types.js';

/** Input to plan one request. */
export interface PlanInput {
  logicalUrl: string;
  /** 'GET', 'HEAD', ... */
  method: string;
  /** Servers holding the resource, in the ORIGIN's order (binding order): the cold-start order. */
  candidates: readonly ServerId[];
  /** Expected body size when known: from the binding row or an earlier response. */
  sizeBytes?: number | undefined;
  nowMs: number;
  /**
   * This client's exchanges in flight now, to every server (the engine's ledger,
   * in-flight.ts): the queue a new request joins (issue 22 §2, bursts). Absent: none known.
   */
  inFlight?: readonly InFlightExchange[] | undefined;
  /**
   * A server whose answer costs this client less in a way the policy cannot see (the worker:
   * the own origin of a navigation, whose request the browser already sent as the navigation
   * preload). A policy may put it first where it predicts no gain elsewhere. Absent: none.
   */
  preferred?: ServerId | undefined;
  /**
   * The same request planned again at the moment it can be sent (late binding, the engine's
   * late-binding.ts; ClientPolicy.bindsLate): not a new request, so a policy earns no budget
   * for it again. Absent: a new request.
   */
  rebind?: boolean;
}

/** One exchange this client has in flight (in-flight.ts). */
export interface InFlightExchange {
  server: ServerId;
  /** The body size it expects (0: unknown). */
  sizeBytes: number;
  sentAtMs: number;
  /** When its head came, if it did. */
  headAtMs?: number;
}

/** What the engine knows of a served request at its response head (ClientPolicy.reconsiderAtHead). */
export interface HeadFacts {
  server: ServerId;
  /** The request's logical URL (its size is learnt from the head). */
  logicalUrl?: string;
  /** Send → head on this server (ms). */
  ttfbMs: number;
  /** The body's length from Content-Length (bytes), when the head said. */
  contentLengthBytes: number;
  /** The request's other candidates not tried yet in this run, best first. */
  alternatives: readonly ServerId[];
  nowMs: number;
  inFlight?: readonly InFlightExchange[] | undefined;
  /**
   * The driver can wait: it asks again after a decision's `startAfterMs` if the body is still
   * not complete (the simulator; the worker once it does). Absent: only decisions to start
   * now are returned.
   */
  deferrable?: boolean;
  /** Head → now (ms): 0 at the head, the body's time so far when the driver asks again. */
  bodyElapsedMs?: number;
  /**
   * Bytes of the body received so far, from a driver that counts them and fetches only the
   * rest elsewhere (a ranged GET from this byte on). Absent: the driver fetches the whole
   * body elsewhere, and the body's own pace is not known.
   */
  bodyBytesSoFar?: number;
}

/** A second fetch worth starting at the head (ClientPolicy.reconsiderAtHead): the first body to complete wins. */
export interface HeadRedecision {
  server: ServerId;
  /** Expected ms of the rest of the body on the first server, and of a fetch on `server` (the rest with HeadFacts.bodyBytesSoFar, else the whole). */
  restHereMs: number;
  elsewhereMs: number;
  /**
   * Deferrable facts only: start nothing now; ask again after this long (ms) if the body is
   * still running. Absent or 0: start the fetch elsewhere now.
   */
  startAfterMs?: number;
}

export interface PlannedAttempt {
  server: ServerId;
  /** No response head within this → the server is marked failed, the next attempt starts. */
  timeoutMs: number;
  /** Why (shown in decisions), e.g. 'lowest-expected-time', 'cold-start-origin-order', 'hedge'. */
  reason: string;
  /** Start this attempt this many ms after the request began even though earlier ones still wait (a hedge). */
  hedgeAfterMs?: number;
  /**
   * A timed-out attempt keeps running as a hedge until this many ms after it started; then
   * it is cancelled. Default (and anything below timeoutMs): timeoutMs, cancelled at its
   * timeout. See docs/selection.md, "The engine".
   */
  deadlineMs?: number;
  /**
   * Measure its server even when another attempt wins first: it runs on to its own head (within
   * its timeout), whose first byte is learnt, and only its body is cancelled. A tied request
   * that measures a second replica at the cost of a request already sent (plan.ts, coldRace).
   */
  measureHead?: boolean;
}

export type SamplePurpose = 'request' | 'hedge' | 'refresh' | 'probe' | 'resume';

export type SampleOutcome =
  /** A usable response head (2xx, 3xx, 304; also a refresh/probe answered below 500). */
  | 'served'
  /** 404/410: the binding is stale; the server itself is up. */
  | 'stale'
  /** 5xx. */
  | 'server-error'
  /** Refused, reset, CORS or integrity failure, before the head. */
  | 'network-error'
  /** No head within the attempt's timeoutMs (its server is marked failed). */
  | 'timeout'
  /** Abandoned by the engine (another attempt won) or by the page. */
  | 'cancelled'
  /** The body broke off or froze after the head. */
  | 'cut-mid-body';

/** Everything the engine learned from one exchange; the policy's only source of measurements. */
export interface ExchangeSample {
  server: ServerId;
  purpose: SamplePurpose;
  outcome: SampleOutcome;
  nowMs: number;
  /** Send → response head (time to first byte), when a head arrived. */
  ttfbMs?: number;
  /**
   * Body bytes received, and responseStart → responseEnd, when the body completed. The
   * worker takes them from Resource Timing (or its own stream timing when no entry); the
   * simulator from its network model.
   */
  bodyBytes?: number;
  bodyMs?: number;
  /** HTTP status of the head, when one arrived. */
  status?: number;
  /**
   * How many other exchanges of this client to the same server were in flight when this one
   * was sent (the engine's ledger): a timeout behind the client's own queue is not the
   * server's failure (issue 22 §2).
   */
  queuedAhead?: number;
  /**
   * With a 'timeout', or a 'cut-mid-body' for a body that stalled past its idle timeout (not
   * one that broke off: then absent): whether the same server sent this client another
   * response head while this exchange waited on it (the engine's ledger, in-flight.ts). true:
   * the server is alive, slow or stalled on this exchange, not dead (issue 22 §2: a replica
   * that answers, however slowly, is not marked failed).
   */
  answeredWhileWaiting?: boolean;
  /**
   * With a head: how many other exchanges of this client to the same server waited for their
   * heads while this one did (in-flight.ts, contending): the server's own concurrency shows in
   * how the first byte grows with it (policies/webpp/concurrency.ts).
   */
  contending?: number;
  /**
   * The server's pushed service time carried by this same response (its
   * `Server-Timing: webpp;dur=…`, e.g. from Resource Timing's serverTiming), when the
   * driver has it. Pairs R (ttfbMs) with S for the network factor A = R / S (issue 13;
   * Fei et al., Section 4.3). Absent: the policy pairs the sample with the value that
   * learnPushedServiceTime delivered during the exchange, if any.
   */
  serviceMs?: number;
  /**
   * The ALPN protocol of the connection that carried the exchange ('http/1.1', 'h2', 'h3'),
   * when the driver knows it: the worker from its Resource Timing entry's nextHopProtocol
   * (given with Timing-Allow-Origin), the simulator from its world. It tells how many
   * exchanges the server takes at once from this client (queue-ahead.ts, connectionsFor).
   */
  protocol?: string | undefined;
}

/**
 * One row of an aggregate the origin may send for first visits (issue 13 §6): other
 * clients' response times to `server` from networks like this client's. Aggregates only,
 * no per-visitor data.
 */
export interface AggregateResponseTime {
  server: ServerId;
  /** Median response time (send → first byte) those clients measured, in ms. */
  responseMs: number;
  /** How many client reports the median summarises (≥ 1). */
  sampleCount: number;
}

/** A background request the policy wants sent now (counted as an extra request). */
export interface BackgroundRequest {
  server: ServerId;
  purpose: 'refresh' | 'probe';
  /**
   * 'head' (HEAD of a known physical URL) or 'range' (GET with Range: bytes=0-<rangeBytes-1>),
   * the latter lets the policy measure throughput.
   */
  method: 'head' | 'range';
  rangeBytes?: number;
  /** No head within this → the exchange is cancelled and reported as 'timeout'. Default: the engine's backgroundTimeoutMs. */
  timeoutMs?: number;
}

export interface MaintenanceInput {
  /** Candidates of the request just served (Figure 4's R); empty when the maintenance timer fired. */
  candidates: readonly ServerId[];
  /**
   * Servers with a background request still in flight: the engine never sends a second one
   * to such a server, so a policy should not return them (nor count them as sent).
   */
  inFlight: ReadonlySet<ServerId>;
  nowMs: number;
}

export interface ClientPolicy {
  readonly name: string;
  /**
   * What wins a race between attempts: the first usable response head (default), or the
   * first complete body ('body': the evaluation's `optimal-complete`, paper Section 6.1).
   */
  readonly winOn?: 'head' | 'body';
  /**
   * Late binding (the engine's late-binding.ts): a request whose first choice would wait
   * behind this client's own exchanges there is held by the engine and planned again
   * (PlanInput.rebind) each time one of them ends, until its first choice can take it. Only
   * for a policy whose plans use what the burst's first answers teach; absent or false: every
   * request is sent on its first plan (the paper's policies and the baselines).
   */
  readonly bindsLate?: boolean;
  /**
   * Late binding: which of a plan's `servers` (best first) a request of `sizeBytes` (0:
   * unknown) may be sent to now, given this client's exchanges in flight (`inFlight`, the
   * engine's ledger): its index (the engine sends that attempt first), or undefined to hold
   * the request until one of them answers, e.g. a server never measured already has one. The
   * transport's own limit (ClientEngineOptions.connectionsPerServer) applies on top. Asked
   * only for a policy that binds late. Absent: the plan's first.
   */
  sendableAttempt?(servers: readonly ServerId[], inFlight: readonly InFlightExchange[], sizeBytes: number, nowMs: number): number | undefined;
  /** Attempts for one request, best first (see docs/selection.md). */
  plan(input: PlanInput): PlannedAttempt[];
  /**
   * Asked by the engine at the moment a planned hedge is about to start; false = skip it
   * (a hedge budget / token bucket). Absent = always true.
   */
  admitHedge?(server: ServerId, nowMs: number): boolean;
  /**
   * Asked by the engine when a request's attempt on `server` timed out (its 'timeout'
   * sample already observed) and another attempt could start. false = not now: the engine
   * keeps waiting on the running attempt until its deadlineMs and fails over only then (a
   * retry budget: timeouts on a busy cluster must not multiply its load). Not asked after
   * a refused connection or a 5xx, and a refusal is ignored when the attempt has no
   * deadline beyond its timeout. Absent = always true.
   */
  admitFailover?(server: ServerId, nowMs: number): boolean;
  /**
   * Every attempt of a request failed (refused, reset, timed out past its deadline, 5xx) and
   * none runs any more: ms to wait before the engine tries the plan again (a retry round,
   * servers not marked failed first), or undefined to let the request fail now. `round`:
   * retry rounds so far (0 before the first); `elapsedMs`: since the request started;
   * `servers`: the plan's servers. A missing resource (404/410) is never retried. Absent =
   * fail at once (Figure 4).
   */
  retryAfterMs?(round: number, elapsedMs: number, servers?: readonly ServerId[]): number | undefined;
  /** Every sample, from requests, hedges, refreshes, probes and resumes. */
  observe(sample: ExchangeSample): void;
  /**
   * Background requests due now, among the candidates of the request just served and the
   * servers the policy knows. Called after every request and when the engine's maintenance
   * timer fires. A policy that returns a request counts it as sent (e.g. F doubles for a
   * probe). Absent = none.
   */
  maintenance?(input: MaintenanceInput): BackgroundRequest[];
  /** When maintenance next wants to run (the engine keeps one timer), or undefined. */
  nextMaintenanceAtMs?(nowMs: number): number | undefined;
  /**
   * Subscribe to "this server was just marked failed" (another request timed out on it), so
   * an attempt waiting on it can fail over at once. Returns unsubscribe.
   */
  onServerFailed?(listener: (server: ServerId) => void): () => void;
  /**
   * Server push (issue 13; Fei et al., Section 4.3): `server` reported its own smoothed
   * service time `serviceMs` (queueing inside the server included), valid at `atMs` on the
   * engine's clock — from its own `Server-Timing: webpp;dur=…` (atMs = now) or relayed by
   * another replica's `webpp-load` (atMs = now − age). The policy calibrates it with its own
   * measurements (A = R / S) and, for a server it has not heard from lately, ranks it by
   * A × S at once. Call it before or after the sample of the same response; order does not
   * matter. Values from the future, negative or non-finite ones are ignored. Absent = the
   * policy ignores push. `utilisation`: the server's busy share of its last measurement
   * interval, 0–1 (`Server-Timing: webpp;dur=…;util=…`), when it said; the webpp policy
   * spreads requests away from busy servers by it (load-spread.ts).
   */
  learnPushedServiceTime?(server: ServerId, serviceMs: number, atMs: number, utilisation?: number): void;
  /**
   * First visits (issue 13 §6): an aggregate of other clients' measurements the origin
   * sent (opt-in on the origin). Seeds the ranking of servers this client has not measured
   * yet; its own measurements replace it. Absent = ignored.
   */
  learnAggregateResponseTimes?(rows: readonly AggregateResponseTime[], atMs: number): void;
  /**
   * Unknown sizes (issue 22 §2): the expected body size of a URL the driver knows no size
   * for, from the sizes it has learnt. Absent or undefined: unknown.
   */
  estimateSizeBytes?(logicalUrl: string): number | undefined;
  /** A body size learnt for a logical URL (a complete body, a Content-Length, a binding). */
  learnSize?(logicalUrl: string, sizeBytes: number): void;
  /**
   * Decide again at the response head (issue 22 §2): with the size and this server's pace
   * known, a fetch elsewhere worth starting now (the first complete body wins), or
   * undefined. The driver asks for the whole body, or for the rest as resume does.
   */
  reconsiderAtHead?(facts: HeadFacts): HeadRedecision | undefined;
  /**
   * True when a plan for `input` with `preferred: server` would send the request to `server`
   * first, with no hedge, race or other attempt started around it: the driver may then let
   * the platform fetch it (the worker leaves such a request to the browser). Synchronous and
   * without side effects on the budgets. Absent = never.
   */
  isSoleFirstChoice?(input: PlanInput, server: ServerId): boolean;
  /**
   * How many of this client's exchanges `server` takes at once: the browser's connections
   * for the protocol it learnt (6 over HTTP/1.1, 100 streams over h2/h3), or fewer when the
   * server's own concurrency is lower (issue 22 §2, bursts). Drivers hand it to the engine's
   * queue timers (ClientEngineOptions.connectionsPerServer), so the timers and the policy's
   * pricing give one answer. Absent: the driver's own transport limit.
   */
  exchangesAtOnce?(server: ServerId): number;
  /** Plain-JSON state, persisted by the worker (IndexedDB) and restored with restore(). */
  snapshot(): unknown;
  restore(state: unknown): void;
  /** One row per known server for the dashboard / state reporter. */
  describe(nowMs: number): PolicyServerView[];
}

export interface PolicyServerView {
  server: ServerId;
  state: 'available' | 'failed' | 'unknown';
  /** The policy's current estimate of time to first byte, and of throughput if it has one. */
  ttfbEstimateMs?: number;
  throughputBytesPerMs?: number;
  sampleCount: number;
  lastSampleAtMs: number;
  /** When a failed server is next probed. */
  nextProbeAtMs?: number;
  /** The timeout an attempt on it gets now, before any wait in the client's own queue (ms), when the policy times attempts per server. */
  timeoutMs?: number;
  /** The protocol its answers came over ('http/1.1', 'h2', 'h3'), once a sample said (ExchangeSample.protocol). */
  protocol?: string;
}

export interface PolicyDeps {
  /** Injected RandomSource. */
  random: () => number;
  /** The engine's clock (ms): the same one whose readings arrive as `nowMs`. */
  now: () => number;
}

export type PolicyFactory = (deps: PolicyDeps, options?: Record<string, unknown>) => ClientPolicy;
