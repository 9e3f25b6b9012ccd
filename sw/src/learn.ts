/**
 * Stage 5 of a bound request, learn: what the request taught beyond its answers (those were
 * learnt as they came, attempt.ts fetchDidSucceed). It runs once the page has its response
 * (serve.ts: the fetch handler's RespondIO.afterResponse), so none of it delays the answer. The
 * plugins hear that the page has it (handlerDidRespond: the decision record and telemetry, the own-origin check after
 * a navigation a replica served), then, inside the event's waitUntil and one after the
 * other, do their background work (handlerDidComplete: the policy's refreshes and probes,
 * paper Figure 4; the batched state write; the client aggregate's report). The last stage.
 */
import type { RunResult } from '@webpp/core';
import type { RequestPath } from './plan.js';
import type { BoundRequest } from './plugins.js';

export function learn(bound: BoundRequest, result: RunResult<Response>, response: Response, path: RequestPath): void {
  const { lifecycle } = path;
  lifecycle.notify('handlerDidRespond', bound, result, response);
  const background = lifecycle.with('handlerDidComplete');
  if (background.length > 0) {
    bound.io.waitUntil(
      (async () => {
        for (const plugin of background) await plugin.handlerDidComplete(bound).catch(() => undefined); // background work never affects a page
      })(),
    );
  }
}
