/**
 * Stage 3 of a bound request, attempt: one run of core's engine over the plan (its state
 * machine: timeouts, failover, hedges, the deadline, the fallback answer), sent with fetch()
 * and real timers (fetch-io.ts). This stage builds each exchange's physical request
 * (physical-request.ts) and tells the plugins about each one: requestWillFetch, then
 * fetchDidFail or fetchDidSucceed (every answer teaches: samples, sizes, bindings) and
 * headDidArrive; when the run ends, attemptsDidFinish (integrity may run the rest). The
 * page's abort ends the run. Then serve.ts.
 */
import { classifyStatus } from '@webpp/core';
import type { EngineAttempt, RunResult } from '@webpp/core';
import type { ExchangeSender } from './fetch-io.js';
import { buildPhysicalRequest } from './physical-request.js';
import type { RequestPath } from './plan.js';
import type { BoundRequest, Lifecycle, ResumeRange } from './plugins.js';
import { serve } from './serve.js';

/** A planned request: a BoundRequest before the attempt stage gives it a sender. */
export type PlannedRequest = Omit<BoundRequest, 'sender' | 'attemptAgain' | 'senderForRest' | 'bodyCancelled'>;

export async function attempt(planned: PlannedRequest, path: RequestPath): Promise<Response> {
  const { lifecycle } = path;
  // The sender's callbacks hand the plugins this very object: it is completed right after.
  const bound = { ...planned } as { -readonly [K in keyof BoundRequest]: BoundRequest[K] };
  bound.sender = senderFor(bound, path.selfOrigin, lifecycle, undefined);
  bound.attemptAgain = (plan, range) => run(bound, plan, path, range);
  bound.senderForRest = (range) => senderFor(bound, path.selfOrigin, lifecycle, range);
  bound.bodyCancelled = () => lifecycle.notify('bodyWasCancelled', bound);
  lifecycle.notify('handlerWillStart', bound);
  let result = await run(bound, bound.plan, path, undefined);
  for (const plugin of lifecycle.with('attemptsDidFinish')) result = await plugin.attemptsDidFinish(bound, result);
  return serve(bound, result, path);
}

/** One run of the engine over `plan`; a 'resume' run for the rest of a body when `range` is given. */
function run(bound: BoundRequest, plan: readonly EngineAttempt[], path: RequestPath, range: ResumeRange | undefined): Promise<RunResult<Response>> {
  const sender = range === undefined ? bound.sender : senderFor(bound, path.selfOrigin, path.lifecycle, range);
  const signal = bound.request.signal;
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve({ kind: 'aborted', attempts: [] });
    const onAbort = (): void => cancel();
    const cancel = path.engine.run(
      plan,
      (result) => {
        signal?.removeEventListener('abort', onAbort);
        resolve(result);
      },
      { context: sender, purpose: range ? 'resume' : 'request', retry: retries(bound, path) },
    );
    signal?.addEventListener('abort', onAbort);
  });
}

/**
 * Every replica failed: core's retry rounds (a backoff, then the plan again, within the
 * policy's window) for a page's subresources; not for a navigation, whose readable error page
 * (listing what was tried) comes at once rather than after half a minute of a blank page, nor
 * when offline copies answer such a request at once (RequestPath.retryFailedRequests).
 */
function retries(bound: BoundRequest, path: RequestPath): boolean {
  return bound.request.mode !== 'navigate' && path.retryFailedRequests;
}

/** How this request's exchanges reach the replicas, with the plugins' callbacks around each. */
function senderFor(bound: BoundRequest, selfOrigin: string, lifecycle: Lifecycle, range: ResumeRange | undefined): ExchangeSender {
  const { request, io } = bound;
  const resume = range !== undefined;
  return {
    build: (exchange, signal) => buildPhysicalRequest(request, exchange.target, { selfOrigin, signal, ...(range ? { resume: range } : {}) }),
    fetch: (physical) => {
      lifecycle.notify('requestWillFetch', physical, bound);
      return io.fetch(physical).catch((error: unknown) => {
        lifecycle.notify('fetchDidFail', physical, error, bound);
        throw error;
      });
    },
    onResponse: (exchange, response, elapsedMs, sentAtMs, physical) =>
      lifecycle.notify('fetchDidSucceed', { bound, exchange, request: physical, response, outcome: classifyStatus(response.status), elapsedMs, sentAtMs, resume }),
    headArrived: (exchange, physical, response, events) =>
      lifecycle.notify('headDidArrive', { bound, exchange, request: physical, response, outcome: classifyStatus(response.status), elapsedMs: 0, sentAtMs: 0, resume }, events),
  };
}
