/**
 * What the worker tells engine v3 that only the worker sees (issue 22 §2;
 * docs/handover/engine-v3-worker-hooks.md), as one lifecycle plugin (plugins.ts):
 *
 *  A. Body end (headDidArrive, at every page-request head): the engine's in-flight ledger
 *     (core engine/in-flight.ts) holds each exchange until its body ends, and the worker
 *     streams bodies to the page without telling the engine. The exchange's connection
 *     flight (connection-queue.ts) ends when its Resource Timing entry comes (responseEnd),
 *     or when it fails or is aborted; then `events.bodyComplete({})` takes it off the
 *     ledger. Without it a page's served requests stay "in flight" for 60 s, and every later
 *     request to that server looks queued behind them (its timeout then never ejects). A body
 *     the worker streams itself (resume.ts, hook C) that the page cancels ends the request's
 *     entries at once (bodyWasCancelled): a cancelled body has no entry to wait for.
 *  B. Size at the head (same call): a 200 with a Content-Length teaches the policy the size
 *     of its logical URL, which feeds the estimates for URLs never fetched (core
 *     size-estimate.ts: the same path under another query, the type, the site's sizes).
 *  C. Decide again at the head (handlerWillRespond, serve.ts), when the plan has replicas
 *     not tried yet: with the size and the server's pace known, the policy may find that
 *     the rest of the body takes longer here than a whole fetch elsewhere (core
 *     head-redecision.ts: rest here > 2 × elsewhere). Then one more fetch of the whole body
 *     goes to that server, run by the engine as a 'hedge' (ledger, timeouts; paid once, at the decision), and
 *     the page gets its bytes from the first body until the second answers with the same
 *     entity; from then on from the second, the bytes the page has skipped (raced-body.ts,
 *     as resumable-body.ts continues a broken body). If the first body ends first, the
 *     second is cancelled. Dean and Barroso's tied requests ("The Tail at Scale", CACM 2013),
 *     sent only once the first is known to be slow.
 *     The worker can wait (HeadFacts.deferrable): when the server's pace is not known yet
 *     (a first page) or the body runs past what it predicted, the policy answers "look
 *     again in startAfterMs" — rent or buy (Karlin et al. 1988): the fetch elsewhere starts
 *     once the body has taken as long as a whole fetch there. The worker then asks again on
 *     a timer with the body's time so far and a fresh in-flight snapshot, while the first
 *     body streams to the page; the timer is cleared when that body ends (its Resource
 *     Timing entry, or the page read it all), breaks, or the page aborts. Only a fetch
 *     started spends a token of the extra budget (core policy.ts, reconsiderAtHead).
 */
import type { ClientEngine, ClientPolicy, ExchangeEvents, HeadRedecision, RunResult } from '@webpp/core';
import type { ConnectionQueue } from './connection-queue.js';
import type { ExchangeSender } from './fetch-io.js';
import type { BoundRequest, WorkerPlugin } from './plugins.js';
import { headRace } from './head-race.js';
import { racedBody, type BodyProgress } from './raced-body.js';
import { bodyExtent } from './resumable-body.js';
import type { StateReporter } from './state-reporter.js';
import { headerInteger } from './_private/numbers.js';

export interface EngineHooksOptions {
  policy: ClientPolicy;
  engine: ClientEngine<Response, ExchangeSender>;
  queue: ConnectionQueue;
  reporter: StateReporter;
  /**
   * A body on time (its server's pace measured) shorter than this is not piped through the
   * worker's JavaScript only to be watched: as for resume (resumeMinBytes), it arrives in a
   * segment or two, and the pipe costs a few tenths of a millisecond.
   */
  watchMinBytes: number;
}

function contentLengthOf(response: Response): number | undefined {
  return headerInteger(response.headers.get('content-length'));
}

function isEncoded(response: Response): boolean {
  const encoding = response.headers.get('content-encoding')?.trim().toLowerCase();
  return encoding !== undefined && encoding !== '' && encoding !== 'identity';
}

/** Engine v3's hooks A, B and C as one lifecycle plugin. */
export function engineHooksPlugin(options: EngineHooksOptions): WorkerPlugin {
  const hooks = new EngineHooks(options);
  return {
    headDidArrive: ({ bound, exchange, request, response }, events) => {
      if (exchange.method === 'request') hooks.headArrived(bound, exchange.purpose, request, response, events);
    },
    handlerWillRespond: (bound, result, response) => hooks.decideAgainAtHead(response, bound, result),
    bodyWasCancelled: (bound) => hooks.release(bound),
  };
}

class EngineHooks {
  /** Ends the ledger entry of the exchange that got this response (hook A), until it is ended. */
  private readonly bodyEnds = new WeakMap<Response, () => void>();
  /** The ledger ends of each bound request's exchanges whose heads arrived (hook A, on bodyWasCancelled). */
  private readonly endsOf = new WeakMap<BoundRequest, (() => void)[]>();

  constructor(private readonly options: EngineHooksOptions) {}

  /** Hooks A and B: the head of one of a page request's exchanges (fetch-io.ts, after events.head). */
  headArrived(bound: BoundRequest, purpose: string, request: Request, response: Response, events: ExchangeEvents<Response>): void {
    let ended = false;
    const end = (): void => {
      if (ended) return;
      ended = true;
      this.bodyEnds.delete(response);
      events.bodyComplete({}); // no bytes/ms: no sample (the worker's samples come from Resource Timing)
    };
    this.bodyEnds.set(response, end);
    const ends = this.endsOf.get(bound);
    if (ends === undefined) this.endsOf.set(bound, [end]);
    else ends.push(end);
    this.options.queue.whenEnded(request, end);
    const lengthBytes = response.status === 200 ? contentLengthOf(response) : undefined;
    if (lengthBytes !== undefined && purpose === 'request') this.options.policy.learnSize?.(bound.logicalUrl, lengthBytes);
  }

  /** Hook A: the page cancelled the body: every exchange of the request leaves the ledger. */
  release(bound: BoundRequest): void {
    const ends = this.endsOf.get(bound);
    this.endsOf.delete(bound);
    for (const end of ends ?? []) end();
  }

  /**
   * Hook C: the response for the page, whose body may come from a second fetch when the
   * policy decides again at the head, now or later (rent or buy). `served` is the page's
   * response for `result`.
   */
  decideAgainAtHead(served: Response, bound: BoundRequest, result: RunResult<Response> & { kind: 'served' }): Response {
    const { request, plan } = bound;
    const { policy, engine } = this.options;
    if (policy.reconsiderAtHead === undefined || plan.length <= result.attempts.length) return served;
    // Only when the plan has replicas not tried yet (most requests: none, and nothing to read here).
    const tried = new Set(result.attempts.map((attempt) => attempt.server));
    const alternatives = plan.filter((spec) => !tried.has(spec.server));
    if (alternatives.length === 0) return served;
    const first = result.response;
    if (served.body === null || request.method !== 'GET' || request.mode === 'navigate' || request.headers.has('range')) return served;
    if (first.status !== 200 || first.type === 'opaque' || isEncoded(first)) return served;
    const lengthBytes = contentLengthOf(first);
    const extent = bodyExtent(first);
    if (lengthBytes === undefined || extent === undefined) return served;
    const winnerRecord = result.attempts.find((attempt) => attempt.server === result.winner.server && attempt.outcome === 'served');
    const headAtMs = engine.now();
    // The bytes the page has had: the body's own pace for the policy, and where the fetch of the rest starts.
    const progress: BodyProgress = { bytes: 0 };
    const facts = {
      server: result.winner.server,
      logicalUrl: bound.logicalUrl,
      ttfbMs: winnerRecord?.ttfbMs ?? 0,
      contentLengthBytes: lengthBytes,
      alternatives: alternatives.map((spec) => spec.server),
      deferrable: true,
    };
    // Asked at the head, and again whenever the policy says to look again while the body runs.
    const ask = (): HeadRedecision | undefined => {
      const nowMs = engine.now();
      return policy.reconsiderAtHead!({ ...facts, nowMs, inFlight: engine.inFlight.snapshot(nowMs), bodyElapsedMs: nowMs - headAtMs, bodyBytesSoFar: progress.bytes });
    };
    const decision = ask();
    if (decision === undefined) return served;
    const onTime = (decision.startAfterMs ?? 0) > 0 && Number.isFinite(decision.restHereMs);
    if (onTime && lengthBytes < this.options.watchMinBytes) return served;
    // The rest of the body from the byte the page has when the fetch elsewhere starts (If-Range: the first answer's strong ETag).
    const restSender = (): ExchangeSender => bound.senderForRest({ range: `bytes=${progress.bytes}-`, ifRange: extent.strongEtag });
    const race = headRace(engine, alternatives, restSender, ask, () => this.bodyEnds.has(first));
    const report = (switched: boolean, reason: string, atByte: number): void => {
      const { to, decision: started } = race.started()!;
      this.options.reporter.event({ type: 'head-redecided', atMs: Date.now(), logicalUrl: bound.logicalUrl, from: result.winner.server, to, switched, reason, atByte, restHereMs: started.restHereMs, elsewhereMs: started.elsewhereMs });
    };
    const body = racedBody(served.body, extent, race.answer, {
      switched: (atByte) => {
        report(true, 'second answered first', atByte);
        race.settle();
        this.bodyEnds.get(first)?.(); // the first body was cancelled: its exchange leaves the ledger
      },
      keptFirst: (reason, atByte) => {
        if (race.started()) report(false, reason, atByte);
        race.end();
      },
      firstBroke: () => race.stop(),
      // The page gave up: neither body will end on its own.
      cancelled: () => {
        race.end();
        this.bodyEnds.get(first)?.();
        const second = race.second();
        if (second) this.bodyEnds.get(second)?.();
      },
    }, progress);
    request.signal?.addEventListener('abort', () => race.end(), { once: true });
    race.follow(decision);
    // The worker's code runs until the race is decided (a timer may still be due): keep the worker alive that long.
    bound.io.waitUntil(race.settled);
    return new Response(body, { status: served.status, statusText: served.statusText, headers: served.headers });
  }
}
