/**
 * A cold worker's navigation (issue 26). The browser stops an idle worker after about 30 s;
 * the next navigation starts it, and its requests wait for the stored state (one IndexedDB
 * read, replica-client.ts) before they are planned. Meanwhile the navigation's preload
 * (navigation-preload.ts) is on its way from the own origin: the browser sent it while the
 * worker started. The preload is on only after a navigation the worker sent to the own origin
 * first, and an answer that is already there is ahead of any replica a plan on the restored
 * state could still ask. So when the preload's answer comes before the state and serves (not
 * a network error, a 5xx or a 404/410), the page gets it at once, and what it teaches is
 * learnt once the state is restored, as the bound or observe path would have learnt it. When
 * the state comes first, or the preload fails, the navigation goes the usual way (plan,
 * failover): a preload that hangs or fails holds the page no longer than the restore did.
 */
import { BINDINGS_HEADER, classifyStatus, serverOf } from '@webpp/core';
import type { ResolvedBinding } from '@webpp/core';
import type { ClientParts } from './assemble.js';
import { decisionRecord } from './decision-record.js';
import type { RespondIO } from './plugins.js';

/**
 * The preload's answer when it comes before `restored` settles and serves the page; else
 * undefined, once `restored` has settled (never later). Never rejects.
 */
export function preloadFirst(preload: Promise<Response | undefined>, restored: Promise<unknown>): Promise<Response | undefined> {
  const afterRestore = restored.then(() => undefined);
  const serves = (response: Response | undefined): Response | Promise<undefined> =>
    response && response.type !== 'error' && classifyStatus(response.status) === 'served' ? response : afterRestore;
  return Promise.race([afterRestore, preload.then(serves, () => afterRestore)]);
}

/**
 * What the preload's answer to a navigation teaches, once the state is restored (and the
 * worker is not switched off): its headers (bindings, switch-off; the own origin's), the page's
 * proof of life (direct.ts), and for a bound navigation its decision record (served by the
 * own origin), else the static bindings file as the observe path reads it (observe.ts).
 * `totalMs`: the fetch event to the page's answer.
 */
export function learnPreloaded(parts: ClientParts, request: Request, resolved: ResolvedBinding | undefined, response: Response, io: RespondIO, atMs: number, totalMs: number): void {
  const { headers, reporter } = parts;
  headers.learnFrom(response, resolved?.logical ?? request.url, io.waitUntil);
  if (resolved) {
    reporter.count('bound');
    reporter.count('served');
    const winner = { server: serverOf(request.url), target: request.url, reason: 'preload-before-restore', timeoutMs: 0 };
    const result = { kind: 'served' as const, response, winner, attempts: [{ ...winner, purpose: 'request' as const, outcome: 'served' as const, status: response.status, startedAfterMs: 0 }] };
    reporter.decision(decisionRecord({ id: reporter.decisionId(), atMs, request, logicalUrl: resolved.logical, policy: parts.policy.name, result, bindMs: 0, totalMs }));
  } else {
    reporter.count('observed');
    if (response.ok && !response.headers.has(BINDINGS_HEADER)) io.waitUntil(headers.learnStaticBindings(io.waitUntil));
  }
  const written = parts.direct.pageAnswered(request, true);
  if (written) io.waitUntil(written);
}
