/**
 * The second fetch of one first body when the policy decides again at the response head
 * (engine-hooks.ts, hook C): the policy's timer while it says to look again (rent or buy, or
 * the body's own pace; core head-redecision.ts), the fetch of the rest once it says to start
 * (a 'hedge' run of the engine, paid by the policy when it decided: ledger, timeouts; a ranged
 * GET from the byte the page has), and its answer for the raced body (raced-body.ts). A closure,
 * not a class: it is in every worker bundle, and minified closures are the smaller.
 */
import type { ClientEngine, EngineAttempt, HeadRedecision, ServerId } from '@webpp/core';
import type { ExchangeSender } from './fetch-io.js';

export interface HeadRace {
  /** The second fetch's answer; undefined when there is none (it failed, or will not start). */
  readonly answer: Promise<Response | undefined>;
  /** Resolves when nothing more is decided here: the race is won, or no second fetch will start. */
  readonly settled: Promise<void>;
  /** The fetch elsewhere, once started, and the decision that started it. */
  started(): { to: ServerId; decision: HeadRedecision } | undefined;
  /** The second fetch's response, once it answered. */
  second(): Response | undefined;
  /** Follows the policy's answer: start the fetch elsewhere now, look again later, or neither. */
  follow(decision: HeadRedecision | undefined): void;
  /** No fetch elsewhere starts from now on (one started runs on: the first body broke, and it may continue it). */
  stop(): void;
  /** The first body won, or the page gave up: the fetch elsewhere, if any, is cancelled. */
  end(): void;
  /** Nothing more is decided (the page's bytes come from the second body). */
  settle(): void;
}

/**
 * `ask`: the policy's decision now (with the body's time so far); `firstRunning`: the first
 * body is still coming (its exchange has not ended); `sender`: how the fetch elsewhere is
 * sent, asked for at the moment it starts (the rest of the body from the byte the page has then).
 */
export function headRace(
  engine: ClientEngine<Response, ExchangeSender>,
  alternatives: readonly EngineAttempt[],
  sender: () => ExchangeSender,
  ask: () => HeadRedecision | undefined,
  firstRunning: () => boolean,
): HeadRace {
  let resolveAnswer!: (response: Response | undefined) => void;
  let settle!: () => void;
  const answer = new Promise<Response | undefined>((resolve) => (resolveAnswer = resolve));
  const settled = new Promise<void>((resolve) => (settle = resolve));
  let started: { to: ServerId; decision: HeadRedecision } | undefined;
  let second: Response | undefined;
  let cancelTimer: (() => void) | undefined;
  let cancelRun: (() => void) | undefined;
  /** No fetch starts any more (the first body is over, or the policy said none, or one started). */
  let closed = false;

  const stop = (): void => {
    closed = true;
    cancelTimer?.();
    cancelTimer = undefined;
    if (started === undefined) {
      resolveAnswer(undefined);
      settle();
    }
  };
  const follow = (decision: HeadRedecision | undefined): void => {
    if (closed) return;
    const waitMs = decision?.startAfterMs ?? 0;
    if (decision !== undefined && waitMs > 0) {
      cancelTimer = engine.setTimer(waitMs, () => {
        cancelTimer = undefined;
        if (!firstRunning()) return stop();
        try {
          follow(ask());
        } catch {
          stop(); // the first body goes on as it is: the worker fails open
        }
      });
      return;
    }
    const target = decision === undefined ? undefined : alternatives.find((spec) => spec.server === decision.server);
    if (decision === undefined || target === undefined) return stop();
    closed = true;
    started = { to: target.server, decision };
    const attempt: EngineAttempt = { ...target, hedgeAfterMs: undefined, reason: 'head-redecision' };
    cancelRun = engine.run([attempt], (run) => {
      second = run.kind === 'served' ? run.response : undefined;
      if (run.kind === 'failed') run.fallback?.response.body?.cancel().catch(() => undefined);
      resolveAnswer(second);
    }, { context: sender(), purpose: 'hedge' });
  };
  return {
    answer,
    settled,
    started: () => started,
    second: () => second,
    follow,
    stop,
    end: () => {
      stop();
      cancelRun?.();
      settle();
    },
    settle: () => settle(),
  };
}
