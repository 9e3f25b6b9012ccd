/**
 * What the client engine needs from its driver (the worker: real timers and fetch; the
 * simulator: a virtual clock and a network model), what it reports back, and the named
 * lifecycle callbacks telemetry hooks into (in the manner of Workbox plugins). Types only.
 */
import type { ServerId } from '../types.js';
import type { BackgroundRequest, ExchangeSample, PlannedAttempt, SamplePurpose } from './policy-types.js';

/** Stops a timer or an exchange; calling it twice, or after the end, does nothing. */
export type Cancel = () => void;

/** One attempt as the engine runs it: the policy's plan row plus the driver's address for it. */
export interface EngineAttempt extends PlannedAttempt {
  /** The driver's address of the resource on this server: the physical URL (worker), the server (simulator). */
  target: string;
}

/** One HTTP exchange the engine asks the driver to send. */
export interface Exchange {
  server: ServerId;
  target: string;
  purpose: SamplePurpose;
  /** 'request': the page's own request (or the rest of its body for 'resume'); 'head'/'range': background. */
  method: 'request' | 'head' | 'range';
  rangeBytes?: number;
  /** Position of the attempt in the request's plan (0: the first choice). */
  attemptIndex?: number;
  /** The attempt's planned hedge delay, when it has one (0: sent to every replica at once). */
  hedgeAfterMs?: number;
}

export interface ExchangeHead<R> {
  status: number;
  /** Counts as served whatever the status (an opaque redirect, status 0). */
  served?: boolean;
  /**
   * The driver's send → head time. Leave it out when the driver measures the exchange
   * itself and reports the sample later through ClientEngine.observe (the worker does,
   * from Resource Timing): the engine then reports none for this head.
   */
  ttfbMs?: number;
  /** Send → head as the driver timed it, for the attempt records only (not a sample). */
  elapsedMs?: number;
  /** The connection's ALPN protocol, when the driver knows it: goes into the exchange's sample (ExchangeSample.protocol). */
  protocol?: string;
  /** The driver's response object (a Response in the worker), handed back in the result. */
  response: R;
}

/** Events of one exchange, which the driver calls (at most one of head/error first). */
export interface ExchangeEvents<R> {
  head(head: ExchangeHead<R>): void;
  /** The whole body arrived (only drivers that follow bodies call it). */
  bodyComplete(body: { bodyBytes?: number; bodyMs?: number }): void;
  /** Bytes stopped flowing; they resume after `resumesAfterMs`, or never (null). */
  stalled(resumesAfterMs: number | null): void;
  /** Refused or reset: before the head a network error, after it a body cut off mid-stream. */
  error(message?: string): void;
}

/**
 * R: the driver's response (a Response in the worker). C: the driver's context of one run
 * (the page's Request in the worker), handed back on every send of that run; background
 * requests have none.
 */
export interface EngineIO<R, C = unknown> {
  /** The engine's clock in ms (the one policies see). */
  now(): number;
  setTimer(delayMs: number, run: () => void): Cancel;
  /** Sends one exchange; cancelling it aborts it and silences its events. */
  send(exchange: Exchange, events: ExchangeEvents<R>, context: C | undefined): Cancel;
  /** A response the engine will not use (it lost, or a better fallback came): free it. */
  discard?(response: R): void;
}

/** How one attempt of a request ended. */
export type AttemptOutcome = 'served' | 'timeout' | 'network-error' | 'server-error' | 'stale' | 'cancelled' | 'aborted';

export interface AttemptRecord {
  server: ServerId;
  target: string;
  purpose: SamplePurpose;
  reason: string;
  timeoutMs: number;
  outcome: AttemptOutcome;
  status?: number;
  /** Send → head, when the replica answered. */
  ttfbMs?: number;
  /** Its timeout passed before an answer: server marked failed, the attempt ran on until its deadline. */
  timedOut?: boolean;
  /** When the attempt started, relative to the run's start. */
  startedAfterMs: number;
  error?: string;
}

export type RunResult<R> =
  | { kind: 'served'; response: R; winner: EngineAttempt; attempts: AttemptRecord[] }
  /** Every attempt failed. `fallback`: the best HTTP answer seen (404/410 first, then 5xx), if any. */
  | { kind: 'failed'; attempts: AttemptRecord[]; fallback?: { attempt: EngineAttempt; response: R } }
  | { kind: 'aborted'; attempts: AttemptRecord[] };

/**
 * Named lifecycle callbacks (like Workbox plugins' requestWillFetch, fetchDidSucceed, …):
 * telemetry and the state reporter hook in here instead of being called from the logic.
 * Every callback is optional and must not throw (a throw is swallowed).
 */
export interface EngineHooks {
  /** A request was planned (after the policy and the driver's reordering). */
  planned?(info: { logicalUrl: string; plan: readonly EngineAttempt[] }): void;
  /** An exchange is about to be sent. */
  requestWillFetch?(exchange: Exchange): void;
  /** An exchange got a response head. */
  fetchDidSucceed?(exchange: Exchange, head: { status: number; ttfbMs?: number }): void;
  /** An exchange failed (timeout, network error, 5xx, cut mid-body). */
  fetchDidFail?(exchange: Exchange, outcome: ExchangeSample['outcome']): void;
  /** A hedge the plan asked for was skipped because the policy's budget refused it. */
  hedgeRefused?(server: ServerId): void;
  /** A sample is about to reach the policy (the worker's Resource Timing sampler notes failures here). */
  sampleWillBeObserved?(sample: ExchangeSample): void;
  /** The policy took a sample (after observe). `wasFailed`: for a failure sample, whether its server was failed already (else false). */
  sampleObserved?(sample: ExchangeSample, wasFailed: boolean): void;
  /** A background request (refresh/probe) ended. */
  backgroundDidFinish?(request: BackgroundRequest, sample: ExchangeSample, target: string): void;
  /** A run of attempts ended. */
  runDidFinish?(result: RunResult<unknown>): void;
}
