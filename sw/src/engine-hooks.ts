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
 *     not tried yet: with the size and the server's pace known,
 *     the policy may find that the rest of the body takes longer here than a whole fetch
 *     elsewhere (core head-redecision.ts: rest here > 2 × elsewhere). Then one more fetch of
 *     the whole body goes to that server, run by the engine as a 'resume' (ledger, budget,
 *     timeouts), and the page gets its bytes from the first body until the second answers
 *     with the same entity; from then on from the second, the bytes the page has skipped
 *     (as resumable-body.ts continues a broken body). If the first body ends first, the
 *     second is cancelled. Dean and Barroso's tied requests ("The Tail at Scale", CACM 2013),
 *     sent only once the first is known to be slow.
 */
import type { ClientEngine, ClientPolicy, EngineAttempt, ExchangeEvents, RunResult, ServerId } from '@webpp/core';
import type { ConnectionQueue } from './connection-queue.js';
import type { ExchangeSender } from './fetch-io.js';
import type { BoundRequest, WorkerPlugin } from './plugins.js';
import { afterSkipped, bodyExtent, continuation } from './resumable-body.js';
import type { BodyExtent } from './resumable-body.js';
import type { StateReporter } from './state-reporter.js';

export interface EngineHooksOptions {
  policy: ClientPolicy;
  engine: ClientEngine<Response, ExchangeSender>;
  queue: ConnectionQueue;
  reporter: StateReporter;
}

function contentLengthOf(response: Response): number | undefined {
  const value = response.headers.get('content-length');
  if (value === null || !/^\d+$/.test(value.trim())) return undefined;
  const bytes = Number(value);
  return Number.isSafeInteger(bytes) ? bytes : undefined;
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
   * policy decides again at the head. `served` is the page's response for `result`.
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
    const nowMs = engine.now();
    const decision = policy.reconsiderAtHead({
      server: result.winner.server,
      logicalUrl: bound.logicalUrl,
      ttfbMs: winnerRecord?.ttfbMs ?? 0,
      contentLengthBytes: lengthBytes,
      alternatives: alternatives.map((spec) => spec.server),
      nowMs,
      inFlight: engine.inFlight.snapshot(nowMs),
    });
    const target = decision === undefined ? undefined : alternatives.find((spec) => spec.server === decision.server);
    if (target === undefined) return served;

    // The second fetch: the whole body from `target`, one attempt, as a 'resume' run of the engine.
    const attempt: EngineAttempt = { ...target, hedgeAfterMs: undefined, reason: 'head-redecision' };
    let second: Response | undefined;
    let cancelSecond: () => void = () => undefined;
    const secondAnswer = new Promise<Response | undefined>((resolve) => {
      cancelSecond = engine.run([attempt], (run) => {
        second = run.kind === 'served' ? run.response : undefined;
        if (run.kind === 'failed') run.fallback?.response.body?.cancel().catch(() => undefined);
        resolve(second);
      }, { context: bound.sender, purpose: 'resume' });
    });
    const report = (to: ServerId, switched: boolean, reason: string, atByte: number): void =>
      this.options.reporter.event({ type: 'head-redecided', atMs: Date.now(), logicalUrl: bound.logicalUrl, from: result.winner.server, to, switched, reason, atByte, restHereMs: decision!.restHereMs, elsewhereMs: decision!.elsewhereMs });
    const body = racedBody(served.body, extent, secondAnswer, {
      switched: (atByte) => {
        report(target.server, true, 'second answered first', atByte);
        this.bodyEnds.get(first)?.(); // the first body was cancelled: its exchange leaves the ledger
      },
      keptFirst: (reason, atByte) => {
        report(target.server, false, reason, atByte);
        cancelSecond();
      },
      // The page gave up: neither body will end on its own.
      cancelled: () => {
        this.bodyEnds.get(first)?.();
        if (second) this.bodyEnds.get(second)?.();
      },
    });
    return new Response(body, { status: served.status, statusText: served.statusText, headers: served.headers });
  }
}

interface RaceEvents {
  /** The page's bytes come from the second body from now on (`atByte` bytes came from the first). */
  switched(atByte: number): void;
  /** The first body stays (it ended, the second failed or is another entity, or the page cancelled). */
  keptFirst(reason: string, atByte: number): void;
  /** The page cancelled the body. */
  cancelled(): void;
}

type Step = { kind: 'read'; result: ReadableStreamReadResult<Uint8Array> } | { kind: 'error'; error: unknown } | { kind: 'second'; response: Response | undefined };

/**
 * The page's body: `firstBody` until `second` answers with the same entity (checked as
 * resumable-body.ts checks a resume: continuation()), then the second body from the byte
 * the page has on. Whichever happens first decides; the other is cancelled.
 */
function racedBody(firstBody: ReadableStream<Uint8Array>, extent: BodyExtent, second: Promise<Response | undefined>, events: RaceEvents): ReadableStream<Uint8Array> {
  let reader = firstBody.getReader();
  let pendingRead: Promise<Step> | undefined;
  let waiting: Promise<Step> | undefined = second.then((response) => ({ kind: 'second', response }));
  let delivered = 0;
  let skipBytes = 0;
  const keepFirst = (reason: string): void => {
    if (waiting === undefined) return;
    waiting = undefined;
    events.keptFirst(reason, delivered);
  };
  /** The second answered: switch to it when it continues the same entity. */
  const trySwitch = (response: Response | undefined): boolean => {
    waiting = undefined;
    const plan = response ? continuation(response, extent, delivered) : { error: 'no answer' };
    if (!response?.body || 'error' in plan) {
      response?.body?.cancel().catch(() => undefined);
      events.keptFirst('error' in plan ? plan.error : 'answer without a body', delivered);
      return false;
    }
    reader.cancel().catch(() => undefined);
    reader = response.body.getReader();
    pendingRead = undefined;
    skipBytes = plan.skipBytes;
    events.switched(delivered);
    return true;
  };
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        for (;;) {
          pendingRead ??= reader.read().then(
            (result): Step => ({ kind: 'read', result }),
            (error: unknown): Step => ({ kind: 'error', error }),
          );
          const step = await (waiting === undefined ? pendingRead : Promise.race([pendingRead, waiting]));
          if (step.kind === 'second') {
            trySwitch(step.response);
            continue;
          }
          pendingRead = undefined;
          if (step.kind === 'error') {
            // The first body broke before the second answered: wait for the second.
            if (waiting !== undefined && trySwitch(await second)) continue;
            controller.error(step.error);
            return;
          }
          if (step.result.done) {
            keepFirst('first body ended first');
            controller.close();
            return;
          }
          let chunk = step.result.value;
          ({ chunk, skipBytes } = afterSkipped(chunk, skipBytes));
          if (chunk.byteLength === 0) continue;
          delivered += chunk.byteLength;
          controller.enqueue(chunk);
          return;
        }
      },
      cancel(reason) {
        keepFirst('page cancelled');
        events.cancelled();
        return reader.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
}
