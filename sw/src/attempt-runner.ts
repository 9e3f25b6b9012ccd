/**
 * Walks the attempts a policy planned for one request (paper Section 4.1, Figure 4): send to
 * a server; when its T-percentile timeout expires, mark the server failed and send to the
 * next one; on a network error or 5xx, mark it failed and move on; on 404/410 (a stale
 * binding) move on. The first usable response wins. Hedged plans start later attempts while
 * earlier ones still wait; whatever loses is cancelled.
 *
 * A timed-out attempt is not thrown away when its spec has a `deadlineMs` beyond its
 * timeout: it keeps running as a hedge beside the next attempt, and is aborted only at the
 * deadline (the worker uses timeoutCeilingMs). Figure 4 marks the server failed and sends to
 * the next server when the timeout expires; it does not need the first request abandoned.
 * Keeping it matters: a live replica whose answers wait in the browser's queue of six
 * connections per host (a burst), or one that is merely slower than the timeout, would
 * otherwise lose every attempt, and the last replica's timeout would fail the request.
 *
 * So the paper's guarantee holds: as long as one planned replica answers before its
 * deadline, the request is served. Only the page's own abort, or every replica failing,
 * ends it without a response.
 */
import type { ServerId } from '@webpp/core';
import type { AttemptOutcome, AttemptRecord } from './messages.js';

export interface AttemptSpec {
  server: ServerId;
  physicalUrl: string;
  timeoutMs: number;
  reason: string;
  hedgeAfterMs?: number;
  /**
   * After its timeout, the attempt keeps running (its server marked failed, the next attempt
   * started) until this many ms after it started; then it is aborted. Default: timeoutMs
   * (aborted at its timeout).
   */
  deadlineMs?: number;
}

export interface RunnerIO {
  /** Sends one physical request (plain fetch, or Workbox's handler.fetch so plugins run). */
  fetch(request: Request): Promise<Response>;
  /** Builds the physical request for an attempt. */
  buildRequest(attempt: AttemptSpec, signal: AbortSignal): Request;
  /** Monotonic clock in ms. */
  now(): number;
  /**
   * Every response that arrived (before classification), with fetch() → headers and the
   * clock reading just before fetch() was called (to find its Resource Timing entry).
   */
  onResponse?(attempt: AttemptSpec, response: Response, ttfbMs: number, sentAtMs: number): void;
  /** An attempt failed in a way that marks its server failed (timeout, network error, 5xx). */
  onServerFailure?(attempt: AttemptSpec, outcome: AttemptOutcome): void;
  /**
   * Subscribes to "this server was just marked failed elsewhere" (another request timed out
   * on it). An attempt still waiting on that server then starts the next attempt without
   * waiting for its own timeout. Returns an unsubscribe function.
   */
  watchServerFailure?(server: ServerId, onFailed: () => void): () => void;
}

export type RunResult =
  | { kind: 'served'; response: Response; winner: AttemptSpec; attempts: AttemptRecord[] }
  /** Every attempt failed. `fallback` is the best HTTP answer seen (404/410 first, then 5xx), if any. */
  | { kind: 'failed'; attempts: AttemptRecord[]; fallback?: { attempt: AttemptSpec; response: Response } }
  | { kind: 'aborted'; attempts: AttemptRecord[] };

export function classifyStatus(status: number): AttemptOutcome {
  if (status >= 500) return 'server-error';
  if (status === 404 || status === 410) return 'stale';
  return 'served';
}

const TIMEOUT = 'webpp-timeout';
const CANCELLED = 'webpp-cancelled';

interface RunningAttempt {
  spec: AttemptSpec;
  record: AttemptRecord;
  controller: AbortController;
  timer: ReturnType<typeof setTimeout> | undefined;
  unwatch: (() => void) | undefined;
  done: boolean;
  /** Its timeout passed; it runs on as a hedge until its deadline. */
  timedOut: boolean;
}

export function runAttempts(plan: readonly AttemptSpec[], io: RunnerIO, pageSignal?: AbortSignal): Promise<RunResult> {
  return new Promise<RunResult>((resolve) => {
    const startMs = io.now();
    const records: AttemptRecord[] = [];
    const running = new Set<RunningAttempt>();
    const hedgeTimers: ReturnType<typeof setTimeout>[] = [];
    let next = 0;
    let settled = false;
    let fallback: { attempt: AttemptSpec; response: Response; rank: number } | undefined;

    const finish = (result: RunResult): void => {
      if (settled) return;
      settled = true;
      for (const timer of hedgeTimers) clearTimeout(timer);
      pageSignal?.removeEventListener('abort', onPageAbort);
      for (const attempt of running) cancel(attempt, 'cancelled');
      if (result.kind !== 'failed' && fallback) fallback.response.body?.cancel().catch(() => undefined);
      resolve(result);
    };

    const cancel = (attempt: RunningAttempt, outcome: 'cancelled' | 'aborted'): void => {
      if (attempt.done) return;
      // An attempt that timed out keeps saying so when another answer wins.
      if (!attempt.timedOut || outcome === 'aborted') attempt.record.outcome = outcome;
      settle(attempt);
      attempt.controller.abort(CANCELLED);
    };

    const settle = (attempt: RunningAttempt): void => {
      attempt.done = true;
      if (attempt.timer !== undefined) clearTimeout(attempt.timer);
      attempt.unwatch?.();
      running.delete(attempt);
    };

    /** Starts the next planned attempt; false when none is left. */
    const startNext = (): boolean => {
      if (settled) return false;
      const spec = plan[next];
      if (!spec) return false;
      next++;
      launch(spec);
      return true;
    };

    /** After a failure: the next attempt, or the end when nothing is left or running. */
    const failedOver = (): void => {
      if (settled) return;
      if (!startNext() && running.size === 0) {
        finish(fallback ? { kind: 'failed', attempts: records, fallback } : { kind: 'failed', attempts: records });
      }
    };

    const launch = (spec: AttemptSpec): void => {
      const record: AttemptRecord = {
        server: spec.server,
        physicalUrl: spec.physicalUrl,
        reason: spec.reason,
        timeoutMs: spec.timeoutMs,
        outcome: 'cancelled',
        startedAfterMs: Math.round((io.now() - startMs) * 100) / 100,
      };
      records.push(record);
      const controller = new AbortController();
      const attempt: RunningAttempt = { spec, record, controller, timer: undefined, unwatch: undefined, done: false, timedOut: false };
      running.add(attempt);

      let request: Request;
      try {
        request = io.buildRequest(spec, controller.signal);
      } catch (error) {
        // A physical URL the platform refuses (e.g. a forbidden port) fails like a dead server.
        record.outcome = 'network-error';
        record.error = String(error);
        settle(attempt);
        failedOver();
        return;
      }

      const deadlineMs = Math.max(spec.timeoutMs, spec.deadlineMs ?? spec.timeoutMs);
      attempt.timer = setTimeout(() => {
        if (deadlineMs <= spec.timeoutMs) {
          controller.abort(TIMEOUT);
          return;
        }
        // Figure 4: the timeout marks the server failed and the next server is asked; this
        // request stays as a hedge, and the first answer of the two wins.
        attempt.timedOut = true;
        record.outcome = 'timeout';
        record.timedOut = true;
        attempt.unwatch?.(); // its own failure report must not nudge it a second time
        attempt.unwatch = undefined;
        io.onServerFailure?.(spec, 'timeout');
        attempt.timer = setTimeout(() => controller.abort(TIMEOUT), deadlineMs - spec.timeoutMs);
        failedOver();
      }, spec.timeoutMs);
      let nudged = false;
      attempt.unwatch = io.watchServerFailure?.(spec.server, () => {
        if (nudged || attempt.done) return;
        nudged = true;
        startNext();
      });

      const sentAtMs = io.now();
      io.fetch(request).then(
        (response) => {
          const ttfbMs = io.now() - sentAtMs;
          if (attempt.done) {
            // Lost the race (or cancelled): the answer still tells us about the server.
            io.onResponse?.(spec, response, ttfbMs, sentAtMs);
            response.body?.cancel().catch(() => undefined);
            return;
          }
          settle(attempt);
          record.status = response.status;
          record.ttfbMs = Math.round(ttfbMs * 100) / 100;
          io.onResponse?.(spec, response, ttfbMs, sentAtMs);
          const outcome = response.type === 'opaqueredirect' ? 'served' : classifyStatus(response.status);
          record.outcome = outcome;
          if (outcome === 'served') {
            finish({ kind: 'served', response, winner: spec, attempts: records });
            return;
          }
          if (outcome === 'server-error') io.onServerFailure?.(spec, outcome);
          keepAsFallback(spec, response, outcome === 'stale' ? 2 : 1);
          failedOver();
        },
        (error: unknown) => {
          if (attempt.done) return;
          settle(attempt);
          const timedOut = controller.signal.aborted && controller.signal.reason === TIMEOUT;
          record.outcome = timedOut ? 'timeout' : 'network-error';
          if (!timedOut) record.error = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
          // A hedge that reached its deadline already marked its server failed at its timeout.
          if (!(timedOut && attempt.timedOut)) io.onServerFailure?.(spec, record.outcome);
          failedOver();
        },
      );
    };

    /** Keeps the most telling failed answer (404/410 over 5xx, later over earlier) to return if all fail. */
    const keepAsFallback = (attempt: AttemptSpec, response: Response, rank: number): void => {
      if (fallback && fallback.rank > rank) {
        response.body?.cancel().catch(() => undefined);
        return;
      }
      fallback?.response.body?.cancel().catch(() => undefined);
      fallback = { attempt, response, rank };
    };

    const onPageAbort = (): void => {
      for (const attempt of running) cancel(attempt, 'aborted');
      finish({ kind: 'aborted', attempts: records });
    };

    if (pageSignal?.aborted) {
      finish({ kind: 'aborted', attempts: records });
      return;
    }
    pageSignal?.addEventListener('abort', onPageAbort);

    plan.forEach((spec, index) => {
      if (spec.hedgeAfterMs === undefined || index === 0) return;
      hedgeTimers.push(
        setTimeout(() => {
          while (!settled && next <= index && startNext()) {
            // start every attempt up to this hedged one
          }
        }, spec.hedgeAfterMs),
      );
    });
    if (!startNext()) finish({ kind: 'failed', attempts: records });
  });
}
