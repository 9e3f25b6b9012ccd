/**
 * The serve stage's guard for bodies, as a lifecycle plugin (handlerWillRespond): a served
 * response whose body survives its replica dying mid-stream (resumable-body.ts). When the
 * body breaks off or freezes (no byte within the winning attempt's deadline: core's
 * bodyIdleTimeoutMs, the same rule the simulator follows), its server is reported to the
 * engine ('cut-mid-body') and the rest comes from the rest of the plan by a Range request,
 * run by the engine like any request (BoundRequest.attemptAgain). When the page cancels the
 * body the plugins hear it (bodyWasCancelled).
 */
import { bodyIdleTimeoutMs } from '@webpp/core';
import type { ExchangeSample, ServerId } from '@webpp/core';
import { isMediaRange } from './media-range.js';
import type { WorkerPlugin } from './plugins.js';
import { resumableBody } from './resumable-body.js';
import type { StateReporter } from './state-reporter.js';

export interface ResumeOptions {
  /** Bodies of at least this many bytes (by Content-Length), or of unknown length, are resumable. */
  resumeMinBytes: number;
  reporter: StateReporter;
  /** The learn stage (ClientEngine.observe). */
  observe(sample: ExchangeSample): void;
}

export function resumePlugin(options: ResumeOptions): WorkerPlugin {
  return {
    /** The served response, its body made resumable when that is possible and worth it. */
    handlerWillRespond(bound, result, response) {
      const { request, plan } = bound;
      const { winner } = result;
      if (request.method !== 'GET' || !response.body || (response.status !== 200 && response.status !== 206)) return response;
      if (response.type === 'opaque' || response.type === 'opaqueredirect') return response;
      // The media element resumes a broken range itself, and preloads only an unwrapped body.
      if (isMediaRange(request)) return response;
      const lengthBytes = Number(response.headers.get('content-length') ?? Number.NaN);
      if (Number.isFinite(lengthBytes) && lengthBytes < options.resumeMinBytes) return response;
      let settle!: () => void;
      const settled = new Promise<void>((resolve) => (settle = resolve));
      const body = resumableBody({
        response,
        server: winner.server,
        maxResumes: plan.length,
        // A body frozen by a partition (no error, no bytes) is resumed like a broken one.
        idleTimeoutMs: bodyIdleTimeoutMs(winner),
        fetchRest: async (rest) => {
          const remaining = plan.filter((spec) => !rest.exclude.has(spec.server));
          if (remaining.length === 0) return undefined;
          const run = await bound.attemptAgain(remaining, { range: rest.range, ifRange: rest.ifRange });
          if (run.kind === 'served') return { server: run.winner.server, response: run.response };
          if (run.kind === 'failed') run.fallback?.response.body?.cancel().catch(() => undefined);
          return undefined;
        },
        onBroken: (server: ServerId) => options.observe({ server, purpose: 'request', outcome: 'cut-mid-body', nowMs: Date.now() }),
        onResumed: (report) => {
          options.reporter.count('bodyResumes');
          options.reporter.event({ type: 'body-resumed', atMs: Date.now(), logicalUrl: bound.logicalUrl, ...report });
        },
        onSettled: () => settle(),
        onCancelled: () => bound.bodyCancelled(),
      });
      if (body === response.body) return response;
      // The worker's code runs until the body ends: keep the worker alive that long.
      bound.io.waitUntil(settled);
      return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
    },
  };
}
