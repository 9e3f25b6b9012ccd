/**
 * Walks the attempts a policy planned for one request (paper Section 4.1, Figure 4): send to
 * a server, abort with an AbortController when the T-percentile timeout expires, and on a
 * timeout, network error or 5xx report the server failed and try the next one; on 404/410
 * (a stale binding) try the next one. The first usable response wins. Hedged plans start
 * later attempts while earlier ones still wait; whatever loses is cancelled.
 *
 * So the paper's guarantee holds: as long as one planned replica answers, the request is
 * served. Only the page's own abort, or every replica failing, ends it without a response.
 */
import type { ServerId } from '@webpp/core';
import type { AttemptOutcome, AttemptRecord } from './messages.js';

export interface AttemptSpec {
  server: ServerId;
  physicalUrl: string;
  timeoutMs: number;
  reason: string;
  hedgeAfterMs?: number;
}

export interface RunnerIO {
  /** Sends one physical request (plain fetch, or Workbox's handler.fetch so plugins run). */
  fetch(request: Request): Promise<Response>;
  /** Builds the physical request for an attempt. */
  buildRequest(attempt: AttemptSpec, signal: AbortSignal): Request;
  /** Monotonic clock in ms. */
  now(): number;
  /** Every response that arrived (before classification), with its time to first byte. */
  onResponse?(attempt: AttemptSpec, response: Response, ttfbMs: number): void;
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
      attempt.record.outcome = outcome;
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
      const attempt: RunningAttempt = { spec, record, controller, timer: undefined, unwatch: undefined, done: false };
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

      attempt.timer = setTimeout(() => controller.abort(TIMEOUT), spec.timeoutMs);
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
            io.onResponse?.(spec, response, ttfbMs);
            response.body?.cancel().catch(() => undefined);
            return;
          }
          settle(attempt);
          record.status = response.status;
          record.ttfbMs = Math.round(ttfbMs * 100) / 100;
          io.onResponse?.(spec, response, ttfbMs);
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
          io.onServerFailure?.(spec, record.outcome);
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
