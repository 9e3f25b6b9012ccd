/**
 * The attempt stage in the worker's terms: @webpp/core's state machine (engine/run-attempts.ts:
 * timeouts, failover, hedges, the deadline, the fallback answer) run with fetch() and real
 * timers (fetch-io.ts), with results that name physical URLs. No decision is made here.
 *
 * The paper's guarantee holds (docs/selection.md, "The engine"): as long as one planned
 * replica answers before its deadline, the request is served. Only the page's own abort, or
 * every replica failing, ends it without a response.
 */
import type { AttemptRecord as EngineRecord, EngineAttempt, PlannedAttempt, RunResult as EngineResult } from '@webpp/core';
import type { AttemptRecord } from './messages.js';

export { classifyStatus } from '@webpp/core';

/** One planned attempt with the physical URL it asks. */
export interface AttemptSpec extends PlannedAttempt {
  physicalUrl: string;
}

export type RunResult =
  | { kind: 'served'; response: Response; winner: AttemptSpec; attempts: AttemptRecord[] }
  /** Every attempt failed. `fallback` is the best HTTP answer seen (404/410 first, then 5xx), if any. */
  | { kind: 'failed'; attempts: AttemptRecord[]; fallback?: { attempt: AttemptSpec; response: Response } }
  | { kind: 'aborted'; attempts: AttemptRecord[] };

/** The engine's plan row as the worker names it. */
export function toSpec(attempt: EngineAttempt): AttemptSpec {
  const { target, ...planned } = attempt;
  return { ...planned, physicalUrl: target };
}

export function toEngineAttempt(spec: AttemptSpec): EngineAttempt {
  const { physicalUrl, ...planned } = spec;
  return { ...planned, target: physicalUrl };
}

function toRecord(record: EngineRecord): AttemptRecord {
  const { target, purpose: _purpose, ...rest } = record;
  return { ...rest, physicalUrl: target };
}

/** The engine's result with physical URLs (decision records, integrity guard). */
export function toWorkerResult(result: EngineResult<Response>): RunResult {
  const attempts = result.attempts.map(toRecord);
  if (result.kind === 'served') return { kind: 'served', response: result.response, winner: toSpec(result.winner), attempts };
  if (result.kind === 'failed') {
    return result.fallback ? { kind: 'failed', attempts, fallback: { attempt: toSpec(result.fallback.attempt), response: result.fallback.response } } : { kind: 'failed', attempts };
  }
  return { kind: 'aborted', attempts };
}

/** Runs `run` (which starts a run and returns its cancel) until it ends or the page aborts. */
export function untilDone<T>(start: (done: (result: T) => void) => () => void, abortedResult: () => T, pageSignal?: AbortSignal): Promise<T> {
  return new Promise<T>((resolve) => {
    if (pageSignal?.aborted) return resolve(abortedResult());
    const onAbort = (): void => cancel();
    const cancel = start((result) => {
      pageSignal?.removeEventListener('abort', onAbort);
      resolve(result);
    });
    pageSignal?.addEventListener('abort', onAbort);
  });
}
