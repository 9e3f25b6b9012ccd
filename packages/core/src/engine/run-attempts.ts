/**
 * The per-request state machine (Web++ paper, Section 4.1, Figure 4): walk the attempts a
 * policy planned. Send to a server; when its timeout expires, mark the server failed (a
 * 'timeout' sample) and send to the next; on a network error or 5xx, mark it failed and
 * move on; on 404/410 (a stale binding) move on. The first usable response head wins (the
 * first complete body for a policy with winOn 'body'); whatever loses is cancelled. A
 * planned hedge starts a later attempt while earlier ones still wait, if the policy admits
 * it at that moment.
 *
 * The deadline, one behaviour for worker and simulator: a timed-out attempt is not thrown
 * away when its deadlineMs lies beyond its timeout. Its server is marked failed and the next
 * attempt starts, while it keeps running as a hedge until the deadline; the first answer of
 * the two wins. Figure 4 does not require the first request to be abandoned, and keeping it
 * matters when a live replica is merely slower than its timeout or its answer waits in the
 * browser's per-host queue. So as long as one planned replica answers before its deadline,
 * the request is served.
 *
 * A retry budget (ClientPolicy.admitFailover): after a timeout the policy may say "not now";
 * the timed-out attempt then keeps running alone until its deadline instead of a second
 * attempt piling onto a cluster that is slow already, and the failover starts only at the
 * deadline. Refused connections, 5xx and stale bindings fail over at once.
 *
 * After the head, the engine follows the winner's body where the driver reports it: a
 * complete body is a sample (time to first byte, bytes, time); a body that breaks off, or
 * stalls longer than bodyIdleTimeoutMs, is a 'cut-mid-body' sample and onBodyBroken.
 */
import type { ServerId } from '../types.js';
import type { ExchangeSample, SamplePurpose } from './policy-types.js';
import type { AttemptRecord, Cancel, EngineAttempt, EngineHooks, EngineIO, Exchange, ExchangeHead, RunResult } from './engine-io.js';
import type { InFlightEntry, InFlightLedger } from './in-flight.js';
import { safe } from './safe-hook.js';

export interface RunContext<R, C = unknown> {
  io: EngineIO<R, C>;
  /** Handed to every send of this run. */
  context?: C | undefined;
  /** 'request' for the page's request, 'resume' for the rest of a broken body, 'hedge' for a fetch the policy paid for at the head (RunOptions.purpose). */
  purpose: 'request' | 'resume' | 'hedge';
  winOn?: 'head' | 'body' | undefined;
  /** The learn stage: every sample goes here (to the policy). */
  learn(sample: ExchangeSample): void;
  /** Subscribes to "this server was just marked failed" elsewhere (the policy's onServerFailed). Returns unsubscribe. */
  watchServerFailure?: ((server: ServerId, onFailed: () => void) => () => void) | undefined;
  admitHedge?: ((server: ServerId, nowMs: number) => boolean) | undefined;
  /** After a timeout: may another attempt start now (the policy's budget)? See ClientPolicy.admitFailover. */
  admitFailover?: ((server: ServerId, nowMs: number) => boolean) | undefined;
  hooks?: EngineHooks | undefined;
  /** The winner's body broke off or froze after the run was served. */
  onBodyBroken?: ((server: ServerId) => void) | undefined;
  /** The winner's body arrived whole (drivers that follow bodies). */
  onBodyComplete?: ((server: ServerId) => void) | undefined;
  /** This client's exchanges in flight (in-flight.ts): each exchange of the run enters it while it runs. */
  inFlight?: InFlightLedger | undefined;
  /** The body size the run expects (bytes; 0 or absent: unknown), for the ledger. */
  sizeBytes?: number | undefined;
  /**
   * How many exchanges the driver's transport sends to `server` at once (a browser over
   * HTTP/1.1: 6; undefined: no limit, e.g. HTTP/2): an attempt's timeout starts only when it
   * could have left (in-flight.ts, whenSendable). Absent: every timeout starts at the send.
   */
  connectionsOf?: ((server: ServerId) => number | undefined) | undefined;
  /** Every attempt failed: ms before the plan is tried again, or undefined to fail now (ClientPolicy.retryAfterMs). */
  retryAfterMs?: ((round: number, elapsedMs: number, servers: readonly ServerId[]) => number | undefined) | undefined;
  /** The order of a retry round's attempts (default: the plan's). */
  retryOrder?: ((plan: readonly EngineAttempt[]) => readonly EngineAttempt[]) | undefined;
}

/** How long a served body may stall before it counts as cut off: the attempt's deadline. */
export function bodyIdleTimeoutMs(attempt: Pick<EngineAttempt, 'timeoutMs' | 'deadlineMs'>): number {
  return deadlineOf(attempt);
}

function deadlineOf(attempt: Pick<EngineAttempt, 'timeoutMs' | 'deadlineMs'>): number {
  return Math.max(attempt.timeoutMs, attempt.deadlineMs ?? attempt.timeoutMs);
}

export function classifyStatus(status: number): 'served' | 'stale' | 'server-error' {
  if (status >= 500) return 'server-error';
  if (status === 404 || status === 410) return 'stale';
  return 'served';
}

interface Running<R> {
  attempt: EngineAttempt;
  exchange: Exchange;
  record: AttemptRecord;
  cancelExchange: Cancel;
  timer: Cancel | undefined;
  unwatch: (() => void) | undefined;
  done: boolean;
  timedOut: boolean;
  head?: ExchangeHead<R>;
  /** The body completed or broke off: nothing more to learn from this exchange. */
  ended: boolean;
  /** Its entry in the in-flight ledger, and how many of this client's exchanges to its server were in flight when it was sent. */
  inFlight?: InFlightEntry | undefined;
  queuedAhead: number;
  /** While it waits in the client's own queue: the moment to try the next attempt beside it (no failure). */
  patience?: Cancel | undefined;
}

const round = (ms: number): number => Math.round(ms * 100) / 100;

/** 2^31 − 1 ms, about 24.8 days: the longest timer a browser accepts. */
const NEVER_MS = 2_147_483_647;

/**
 * 404/410 answers after which a request's answer is final (issue 25 item 7): one may be a
 * stale binding (the replica has not got the resource yet, or lost it), so one more replica
 * is asked; a second replica saying the same is the truth, and the rest of the plan is not
 * asked. A missing resource costs at most two requests, not one per replica.
 */
const FINAL_AFTER_MISSING_ANSWERS = 2;

/** Runs `plan`; calls `done` once. Returns a cancel: before the end it aborts the run (the page gave up), after it stops the winner's body. */
export function runAttempts<R, C = unknown>(plan: readonly EngineAttempt[], ctx: RunContext<R, C>, done: (result: RunResult<R>) => void): Cancel {
  const { io, hooks } = ctx;
  const startMs = io.now();
  const records: AttemptRecord[] = [];
  const running = new Set<Running<R>>();
  const hedgeTimers: Cancel[] = [];
  /** The current round's attempts: the plan, then (retry rounds) the plan again in retryOrder. */
  let attempts: readonly EngineAttempt[] = plan;
  let next = 0;
  /** Retry rounds started so far, and the timer of the next one while it waits. */
  let retryRound = 0;
  let retryTimer: Cancel | undefined;
  /** Where the current round's records start. */
  let roundStart = 0;
  let settled = false;
  let winner: Running<R> | undefined;
  let fallback: { attempt: EngineAttempt; response: R; rank: number } | undefined;
  let missingAnswers = 0;

  const learn = (run: Running<R>, outcome: ExchangeSample['outcome'], extra: Partial<ExchangeSample> = {}): void => {
    const sample: ExchangeSample = { server: run.attempt.server, purpose: run.exchange.purpose, outcome, nowMs: io.now(), ...extra };
    if (run.queuedAhead > 0) sample.queuedAhead = run.queuedAhead;
    // A timeout: did the server answer this client since the exchange was sent? Then it is alive.
    if (outcome === 'timeout' && run.inFlight) sample.answeredWhileWaiting = answeredSince(run, run.inFlight.sentAtMs)!;
    const contending = run.head === undefined ? 0 : (run.inFlight?.contending() ?? 0);
    if (contending > 0) sample.contending = contending;
    if (run.head?.protocol !== undefined && outcome !== 'cancelled') sample.protocol = run.head.protocol;
    if (outcome !== 'served' && outcome !== 'cancelled' && hooks?.fetchDidFail) safe(() => hooks.fetchDidFail!(run.exchange, outcome));
    ctx.learn(sample);
  };

  const answeredSince = (run: Running<R>, sinceMs: number): boolean | undefined => ctx.inFlight?.answeredSince(run.attempt.server, sinceMs);

  const finish = (result: RunResult<R>): void => {
    if (settled) return;
    settled = true;
    for (const cancelTimer of hedgeTimers) cancelTimer();
    retryTimer?.();
    for (const run of running) {
      if (run === winner) continue;
      // A loser that measures its server (PlannedAttempt.measureHead) runs on to its head (onHead
      // then cancels it), or to its timeout and deadline; its timers can start nothing now. It
      // carries no body: no entry in the ledger.
      if (winner && run.attempt.measureHead) run.inFlight?.end();
      else cancel(run, 'cancelled');
    }
    if (result.kind !== 'failed' && fallback) io.discard?.(fallback.response);
    if (hooks?.runDidFinish) safe(() => hooks.runDidFinish!(result));
    done(result);
  };

  const settle = (run: Running<R>): void => {
    run.done = true;
    run.timer?.();
    run.patience?.();
    run.unwatch?.();
    run.inFlight?.end();
    running.delete(run);
  };

  const cancel = (run: Running<R>, outcome: 'cancelled' | 'aborted'): void => {
    if (run.done) return;
    // An attempt that timed out keeps saying so when another answer wins.
    if (!run.timedOut || outcome === 'aborted') run.record.outcome = outcome;
    settle(run);
    run.cancelExchange();
  };

  const startNext = (purpose: SamplePurpose): boolean => {
    if (settled) return false;
    const attempt = attempts[next];
    if (!attempt) return false;
    launch(attempt, next++, purpose);
    return true;
  };

  /** After a timeout on `server`: true when a next attempt exists and the policy admits it now (it pays for it). */
  const failoverAdmitted = (server: ServerId): boolean => {
    if (settled || winner || next >= attempts.length) return false;
    return ctx.admitFailover?.(server, io.now()) ?? true;
  };

  const failRun = (): void => finish(fallback ? { kind: 'failed', attempts: records, fallback } : { kind: 'failed', attempts: records });

  /**
   * Every attempt failed and none runs: the plan again after the policy's backoff, while its
   * window lasts (ClientPolicy.retryAfterMs): a replica that was down, flapping or shedding
   * when it was tried may be back. A missing resource (404/410) is not retried. A replica
   * that answered with a 5xx is alive and refusing: one retry round gives a brownout its
   * chance, and no more, so a resource that fails on every replica reaches the page as its
   * 5xx after one backoff rather than at the end of the window, and a shedding server is not
   * asked again and again (Envoy's retry policy: `retry_on: 5xx` with one retry by default).
   * Unless another replica of the round could not be reached (everyOneAnswered): it may be
   * back, so the rounds go on, one per backoff, as when every replica is down.
   */
  const retryLater = (): boolean => {
    if (retryTimer !== undefined) return true;
    if (fallback !== undefined && fallback.rank === 2) return false;
    if (fallback !== undefined && retryRound >= 1 && everyOneAnswered()) return false;
    const delayMs = ctx.retryAfterMs?.(retryRound, io.now() - startMs, plan.map((attempt) => attempt.server));
    if (delayMs === undefined || !(delayMs >= 0)) return false;
    retryTimer = io.setTimer(delayMs, () => {
      retryTimer = undefined;
      if (settled || winner) return;
      retryRound++;
      // The first round's hedges are over; a retry round walks its attempts one after another.
      for (const cancelTimer of hedgeTimers.splice(0)) cancelTimer();
      attempts = ctx.retryOrder?.(plan) ?? plan;
      next = 0;
      roundStart = records.length;
      failedOver();
    });
    return true;
  };

  /**
   * Every attempt of this round had an answer from its server (a 5xx, or a 404/410): none was
   * refused, reset or timed out. Only then is a 5xx the request's answer after one retry round:
   * a replica that could not be reached may be back at the next round (a flap beside a
   * brownout), and the rounds go on within the policy's window.
   */
  const everyOneAnswered = (): boolean => {
    for (let index = roundStart; index < records.length; index++) {
      const outcome = records[index]!.outcome;
      if (outcome !== 'server-error' && outcome !== 'stale') return false;
    }
    return true;
  };

  /** After a failure: the next attempt, or the end when nothing is left or running (unless a retry round follows). */
  const failedOver = (): void => {
    if (settled || winner) return;
    if (!startNext(ctx.purpose) && running.size === 0 && !retryLater()) failRun();
  };

  const keepAsFallback = (attempt: EngineAttempt, response: R, rank: number): void => {
    if (fallback && fallback.rank > rank) return void io.discard?.(response);
    if (fallback) io.discard?.(fallback.response);
    fallback = { attempt, response, rank };
  };

  const win = (run: Running<R>, response: R): void => {
    winner = run;
    finish({ kind: 'served', response, winner: run.attempt, attempts: records });
  };

  const launch = (attempt: EngineAttempt, index: number, purpose: SamplePurpose): void => {
    const exchange: Exchange = {
      server: attempt.server,
      target: attempt.target,
      purpose,
      method: 'request',
      attemptIndex: index,
      ...(attempt.hedgeAfterMs === undefined ? {} : { hedgeAfterMs: attempt.hedgeAfterMs }),
      ...(retryRound > 0 ? { retryRound } : {}),
    };
    const record: AttemptRecord = {
      server: attempt.server,
      target: attempt.target,
      purpose,
      reason: attempt.reason,
      timeoutMs: attempt.timeoutMs,
      outcome: 'cancelled',
      startedAfterMs: round(io.now() - startMs),
    };
    records.push(record);
    const queuedAhead = ctx.inFlight?.count(attempt.server) ?? 0;
    const inFlight = ctx.inFlight?.start(attempt.server, ctx.sizeBytes ?? 0, io.now());
    const run: Running<R> = { attempt, exchange, record, cancelExchange: () => undefined, timer: undefined, unwatch: undefined, done: false, timedOut: false, ended: false, inFlight, queuedAhead };
    running.add(run);
    const deadlineMs = deadlineOf(attempt);
    // How long a timed-out attempt keeps running alone before it is asked about again: until
    // its deadline, or one more timeout when it has none beyond the timeout.
    const waitMs = deadlineMs > attempt.timeoutMs ? deadlineMs - attempt.timeoutMs : attempt.timeoutMs;
    const atDeadline = (): void => {
      // Another attempt runs (the failover this timeout started): this one just ends.
      const alone = running.size === 1;
      // Alone and still no budget for a second request: wait one more period rather than
      // pile on (the request does not fail for want of budget; the page may give up first).
      if (alone && next < attempts.length && !failoverAdmitted(attempt.server)) {
        run.timer = io.setTimer(waitMs, atDeadline);
        return;
      }
      settle(run);
      run.cancelExchange();
      if (alone || running.size === 0) failedOver();
    };
    const onTimeout = (): void => {
      record.outcome = 'timeout';
      if (deadlineMs <= attempt.timeoutMs) {
        learn(run, 'timeout');
        // No deadline beyond the timeout: fail over now, unless the policy's budget says
        // not now (then keep waiting, as below).
        if (failoverAdmitted(attempt.server) || next >= attempts.length) {
          settle(run);
          run.cancelExchange();
          return failedOver();
        }
        run.timedOut = true;
        record.timedOut = true;
        run.unwatch?.();
        run.unwatch = undefined;
        run.timer = io.setTimer(waitMs, atDeadline);
        return;
      }
      // Figure 4: the timeout marks the server failed and the next server is asked; this
      // attempt stays as a hedge until its deadline, and the first answer wins.
      run.timedOut = true;
      record.timedOut = true;
      run.unwatch?.(); // its own failure must not nudge it a second time
      run.unwatch = undefined;
      run.timer = io.setTimer(waitMs, atDeadline);
      learn(run, 'timeout');
      // The budget is empty: keep waiting on this attempt; its deadline fails over.
      if (!failoverAdmitted(attempt.server)) return;
      failedOver();
    };
    // A browser's longest timer (2^31 − 1 ms) or more is no timeout at all (the baselines): no
    // timer. The timeout starts when the exchange could leave the browser, not when it joined
    // the client's own queue for one of the host's connections (in-flight.ts, whenSendable):
    // that queue is never the server's failure (issue 22 §2).
    if (attempt.timeoutMs < NEVER_MS) {
      const arm = (): void => {
        run.patience?.();
        run.patience = undefined;
        run.timer = io.setTimer(attempt.timeoutMs, onTimeout);
      };
      const connections = inFlight === undefined ? undefined : ctx.connectionsOf?.(attempt.server);
      const waiting = connections === undefined ? undefined : ctx.inFlight?.whenSendable(inFlight!, connections, arm);
      if (waiting === undefined) arm();
      else {
        run.timer = waiting;
        // Still queued after its timeout (which the plan lengthened by the wait it expected):
        // the next attempt starts beside it, paid as a failover, and this one keeps its place.
        // Nothing is learnt: the client's queue says nothing of the server.
        run.patience = io.setTimer(attempt.timeoutMs, () => {
          run.patience = undefined;
          if (!run.done && run.head === undefined && failoverAdmitted(attempt.server)) startNext(ctx.purpose);
        });
      }
    }
    // Its server was marked failed by another exchange: the next attempt may start beside this
    // one, which has not failed itself (a brownout still answers most), so it is a hedge and
    // the policy's budget admits it as one (ClientPolicy.admitHedge); refused, this attempt
    // fails over on its own refusal, error or timeout. Unpaid, these duplicated every request
    // of a page's burst on a server ejected mid-burst (training world 204: 85 of 252 requests).
    let nudged = false;
    run.unwatch = ctx.watchServerFailure?.(attempt.server, () => {
      const nextAttempt = attempts[next];
      if (nudged || run.done || nextAttempt === undefined) return;
      nudged = true;
      if (ctx.admitHedge?.(nextAttempt.server, io.now()) ?? true) startNext(ctx.purpose);
    });
    if (hooks?.requestWillFetch) safe(() => hooks.requestWillFetch!(exchange));
    const sentAtMs = io.now();
    run.cancelExchange = io.send(exchange, {
      head: (head) => onHead(run, head, sentAtMs),
      bodyComplete: (body) => onBodyComplete(run, body),
      stalled: (resumesAfterMs) => onStall(run, resumesAfterMs),
      error: (message) => onError(run, message),
    }, ctx.context);
    if (run.done) run.cancelExchange();
  };

  const onHead = (run: Running<R>, head: ExchangeHead<R>, sentAtMs: number): void => {
    if (run.done || run.head) return;
    run.head = head;
    run.inFlight?.head(io.now());
    const { record } = run;
    record.status = head.status;
    record.ttfbMs = round(head.ttfbMs ?? head.elapsedMs ?? io.now() - sentAtMs);
    if (hooks?.fetchDidSucceed) safe(() => hooks.fetchDidSucceed!(run.exchange, { status: head.status, ...(head.ttfbMs === undefined ? {} : { ttfbMs: head.ttfbMs }) }));
    const outcome = head.served ? 'served' : classifyStatus(head.status);
    record.outcome = outcome;
    const measured = head.ttfbMs === undefined ? {} : { ttfbMs: head.ttfbMs };
    // The run is over: only a loser that measures its server is left to have a head (finish).
    if (settled) {
      cancel(run, 'cancelled');
      return learn(run, outcome, measured);
    }
    if (outcome === 'served') {
      run.timer?.();
      run.timer = undefined;
      if ((ctx.winOn ?? 'head') === 'head' && !winner && !settled) {
        run.unwatch?.();
        running.delete(run);
        return win(run, head.response);
      }
      return; // winOn 'body': the first complete body wins
    }
    settle(run);
    learn(run, outcome, { ...measured, status: head.status });
    keepAsFallback(run.attempt, head.response, outcome === 'stale' ? 2 : 1);
    if (outcome === 'stale' && ++missingAnswers >= FINAL_AFTER_MISSING_ANSWERS) {
      return finish({ kind: 'failed', attempts: records, fallback: fallback! });
    }
    failedOver();
  };

  /** The body phase is followed for the winner, and for every head while winOn is 'body'. */
  const followsBody = (run: Running<R>): boolean => run.head !== undefined && !run.ended && (run === winner || !run.done);

  const onBodyComplete = (run: Running<R>, body: { bodyBytes?: number; bodyMs?: number }): void => {
    if (!followsBody(run)) return;
    const head = run.head!;
    run.ended = true;
    run.timer?.();
    run.inFlight?.end();
    if (!winner) {
      settle(run);
      win(run, head.response);
    }
    if (head.ttfbMs !== undefined) learn(run, 'served', { ttfbMs: head.ttfbMs, status: head.status, ...body });
    if (run === winner) ctx.onBodyComplete?.(run.attempt.server);
  };

  const onStall = (run: Running<R>, resumesAfterMs: number | null): void => {
    if (!followsBody(run)) return;
    const idleMs = bodyIdleTimeoutMs(run.attempt);
    if (resumesAfterMs !== null && resumesAfterMs <= idleMs) return;
    run.timer?.();
    run.timer = io.setTimer(idleMs, () => {
      run.cancelExchange();
      onError(run, 'body idle');
    });
  };

  const onError = (run: Running<R>, message?: string): void => {
    if (run === winner) {
      const head = run.head!;
      if (run.ended) return;
      run.ended = true;
      run.timer?.();
      run.inFlight?.end();
      // A body that stalled past its idle timeout (not one broken off): did the server answer this client during the stall?
      learn(run, 'cut-mid-body', {
        ...(head.ttfbMs === undefined ? {} : { ttfbMs: head.ttfbMs, status: head.status }),
        ...(message === 'body idle' && { answeredWhileWaiting: answeredSince(run, io.now() - bodyIdleTimeoutMs(run.attempt)) }),
      });
      return void ctx.onBodyBroken?.(run.attempt.server);
    }
    if (run.done) return;
    const timedOutBefore = run.timedOut;
    settle(run);
    if (run.head) {
      // winOn 'body': a body that broke off before any body completed.
      run.ended = true;
      run.record.outcome = 'network-error';
      learn(run, 'cut-mid-body', run.head.ttfbMs === undefined ? {} : { ttfbMs: run.head.ttfbMs });
      return failedOver();
    }
    run.record.outcome = timedOutBefore ? 'timeout' : 'network-error';
    if (message !== undefined && !timedOutBefore) run.record.error = message;
    // A hedge past its timeout already marked its server failed.
    if (!timedOutBefore) learn(run, 'network-error');
    failedOver();
  };

  /** A planned hedge's moment: start every attempt up to it, if the policy admits it. */
  const hedge = (attempt: EngineAttempt, index: number): void => {
    if (settled || winner || next > index) return;
    if (ctx.admitHedge && !ctx.admitHedge(attempt.server, io.now())) {
      if (hooks?.hedgeRefused) safe(() => hooks.hedgeRefused!(attempt.server));
      return;
    }
    while (!settled && !winner && next <= index && startNext('hedge')) {
      // start every attempt up to this hedged one
    }
  };

  if (!startNext(ctx.purpose)) {
    finish({ kind: 'failed', attempts: records });
  } else {
    plan.forEach((attempt, index) => {
      if (attempt.hedgeAfterMs === undefined || index === 0) return;
      // hedgeAfterMs 0 (every replica at once): now, in plan order, without a timer.
      if (attempt.hedgeAfterMs <= 0) hedge(attempt, index);
      else hedgeTimers.push(io.setTimer(attempt.hedgeAfterMs, () => hedge(attempt, index)));
    });
  }

  return () => {
    if (!settled) {
      for (const run of running) cancel(run, 'aborted');
      return finish({ kind: 'aborted', attempts: records });
    }
    if (winner && !winner.ended) {
      const run = winner;
      run.ended = true;
      run.timer?.();
      run.inFlight?.end();
      run.cancelExchange();
      if (run.head?.ttfbMs !== undefined) learn(run, 'served', { ttfbMs: run.head.ttfbMs, status: run.head.status });
    }
  };
}


