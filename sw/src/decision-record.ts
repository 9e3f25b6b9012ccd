/**
 * Summarises one bound request for the state snapshot and the live events: which replica
 * served which logical URL, every attempt, and the failovers along the way.
 */
import type { RunResult } from '@webpp/core';
import type { AttemptOutcome, DecisionRecord, WebppEvent } from './messages.js';
import { round2 } from './_private/numbers.js';

function isFailureOutcome(outcome: AttemptOutcome): boolean {
  return outcome === 'timeout' || outcome === 'network-error' || outcome === 'server-error' || outcome === 'stale';
}

export interface DecisionInput {
  id: number;
  atMs: number;
  request: Request;
  logicalUrl: string;
  policy: string;
  result: RunResult<Response>;
  bindMs: number;
  totalMs: number;
}

export function decisionRecord(input: DecisionInput): DecisionRecord {
  const { result } = input;
  const served = result.kind === 'served' ? result : undefined;
  const fallback = result.kind === 'failed' ? result.fallback : undefined;
  const answer = served ? { attempt: served.winner, response: served.response } : fallback;
  // Waiting on replicas is not worker time: the latest end of any attempt (its TTFB, or its timeout).
  const waitedMs = result.attempts.reduce((latest, attempt) => {
    const endMs = attempt.startedAfterMs + (attempt.ttfbMs ?? (attempt.outcome === 'timeout' ? attempt.timeoutMs : 0));
    return Math.max(latest, endMs);
  }, 0);
  return {
    id: input.id,
    atMs: input.atMs,
    logicalUrl: input.logicalUrl,
    method: input.request.method,
    destination: input.request.destination,
    navigation: input.request.mode === 'navigate',
    outcome: result.kind === 'served' ? 'served' : result.kind === 'aborted' ? 'aborted' : 'failed',
    ...(answer
      ? { servedBy: answer.attempt.server, physicalUrl: answer.attempt.target, status: answer.response.status }
      : {}),
    failover: result.attempts.some((attempt) => isFailureOutcome(attempt.outcome) || attempt.timedOut === true),
    attempts: result.attempts,
    bindMs: round2(input.bindMs),
    totalMs: round2(input.totalMs),
    workerMs: round2(Math.max(0, input.totalMs - waitedMs)),
    policy: input.policy,
  };
}

/** One `failover` event per failed attempt of the request (a timed-out hedge that still answered included). */
export function failoverEvents(decision: DecisionRecord, atMs: number): WebppEvent[] {
  return decision.attempts
    .filter((attempt) => isFailureOutcome(attempt.outcome) || attempt.timedOut === true)
    .map((attempt) => ({
      type: 'failover' as const,
      atMs,
      logicalUrl: decision.logicalUrl,
      from: attempt.server,
      outcome: attempt.timedOut === true ? ('timeout' as const) : attempt.outcome,
      ...(attempt.status === undefined ? {} : { status: attempt.status }),
    }));
}
