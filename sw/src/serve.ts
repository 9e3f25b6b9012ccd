/**
 * Stage 4 of a bound request, serve: the response the page gets under its logical URL.
 *  - No replica gave a live answer: a plugin may rescue it (handlerDidError: an offline copy).
 *  - A replica served: a plugin may answer instead (replicaAnswerWillBeUsed: a personal
 *    answer comes from the own origin); else the winner's answer under the logical URL
 *    (served-response.ts; a media range as one chunk held whole, media-range.ts), which the
 *    plugins may wrap (handlerWillRespond: decide again at the head, resume a broken body,
 *    check its digest as it ends).
 *  - Every replica failed but one answered (404 everywhere): that answer is the truth.
 * The page's answer may be kept (cacheWillUpdate: offline copies). Then learn.ts, once the page
 * has its answer (the fetch handler's RespondIO.afterResponse).
 */
import type { RunResult } from '@webpp/core';
import { navigationErrorPage } from './error-page.js';
import { learn } from './learn.js';
import { mediaServedResponse } from './media-range.js';
import type { RequestPath } from './plan.js';
import { afterResponse } from './plugins.js';
import type { BoundRequest } from './plugins.js';
import { servedResponse } from './served-response.js';

export async function serve(bound: BoundRequest, result: RunResult<Response>, path: RequestPath): Promise<Response> {
  const response = await answer(bound, result, path);
  // The page's answer first, then the learn stage (RespondIO.afterResponse).
  afterResponse(bound.io, () => learn(bound, result, response, path));
  return response;
}

async function answer(bound: BoundRequest, result: RunResult<Response>, path: RequestPath): Promise<Response> {
  const { request, logicalUrl, io } = bound;
  const { lifecycle } = path;
  // Stale-if-error: only when no replica gave a live answer (no answer, or 5xx).
  if (result.kind === 'failed' && (result.fallback === undefined || result.fallback.response.status >= 500)) {
    for (const plugin of lifecycle.with('handlerDidError')) {
      const rescued = await plugin.handlerDidError(bound, result);
      if (rescued === undefined) continue;
      result.fallback?.response.body?.cancel().catch(() => undefined);
      return rescued;
    }
  }
  let response: Response;
  if (result.kind === 'served') {
    for (const plugin of lifecycle.with('replicaAnswerWillBeUsed')) {
      const instead = await plugin.replicaAnswerWillBeUsed(bound, result);
      if (instead !== undefined) return instead;
    }
    response = await mediaServedResponse(request, servedResponse(request, result.winner.target, result.response));
    for (const plugin of lifecycle.with('handlerWillRespond')) response = plugin.handlerWillRespond(bound, result, response);
  } else if (result.kind === 'failed' && result.fallback) {
    response = servedResponse(request, result.fallback.attempt.target, result.fallback.response);
  } else {
    return request.mode === 'navigate' && result.kind === 'failed' ? navigationErrorPage(logicalUrl, result.attempts) : Response.error();
  }
  for (const plugin of lifecycle.with('cacheWillUpdate')) response = plugin.cacheWillUpdate(request, logicalUrl, response, io.waitUntil);
  return response;
}
