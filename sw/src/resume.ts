/**
 * The serve stage's guard for bodies: a served response whose body survives its replica
 * dying mid-stream (resumable-body.ts). When the body breaks off or freezes (no byte within
 * the winning attempt's deadline: core's bodyIdleTimeoutMs, the same rule the simulator
 * follows), its server is reported to the engine ('cut-mid-body') and the rest comes from
 * the rest of the plan by a Range request, run by the engine like any request.
 */
import { bodyIdleTimeoutMs } from '@webpp/core';
import type { EngineAttempt, ExchangeSample, ServerId } from '@webpp/core';
import { isMediaRange } from './media-range.js';
import { resumableBody } from './resumable-body.js';
import type { ResumeAnswer, ResumeRequest } from './resumable-body.js';
import type { StateReporter } from './state-reporter.js';

export interface ResumeStageOptions {
  /** Bodies of at least this many bytes (by Content-Length), or of unknown length, are resumable. */
  resumeMinBytes: number;
  reporter: StateReporter;
  /** The learn stage (ClientEngine.observe). */
  observe(sample: ExchangeSample): void;
}

/** One served body: where it came from, and how to ask the rest of the plan for its rest. */
export interface ServedBody {
  request: Request;
  logicalUrl: string;
  winner: EngineAttempt;
  /** The plan of the request: the replicas to ask for the rest, in order. */
  plan: readonly EngineAttempt[];
  /** Runs the remaining plan for `rest` (a 'resume' run of the engine). */
  fetchRest(plan: readonly EngineAttempt[], rest: ResumeRequest): Promise<ResumeAnswer | undefined>;
  waitUntil(promise: Promise<unknown>): void;
}

export class ResumeStage {
  constructor(private readonly options: ResumeStageOptions) {}

  /** The served response, its body made resumable when that is possible and worth it. */
  wrap(response: Response, served: ServedBody): Response {
    const { request, winner, plan } = served;
    if (request.method !== 'GET' || !response.body || (response.status !== 200 && response.status !== 206)) return response;
    if (response.type === 'opaque' || response.type === 'opaqueredirect') return response;
    // The media element resumes a broken range itself, and preloads only an unwrapped body.
    if (isMediaRange(request)) return response;
    const lengthBytes = Number(response.headers.get('content-length') ?? Number.NaN);
    if (Number.isFinite(lengthBytes) && lengthBytes < this.options.resumeMinBytes) return response;
    let settle!: () => void;
    const settled = new Promise<void>((resolve) => (settle = resolve));
    const body = resumableBody({
      response,
      server: winner.server,
      maxResumes: plan.length,
      // A body frozen by a partition (no error, no bytes) is resumed like a broken one.
      idleTimeoutMs: bodyIdleTimeoutMs(winner),
      fetchRest: (rest) => {
        const remaining = plan.filter((spec) => !rest.exclude.has(spec.server));
        return remaining.length === 0 ? Promise.resolve(undefined) : served.fetchRest(remaining, rest);
      },
      onBroken: (server: ServerId) => this.options.observe({ server, purpose: 'request', outcome: 'cut-mid-body', nowMs: Date.now() }),
      onResumed: (report) => {
        this.options.reporter.count('bodyResumes');
        this.options.reporter.event({ type: 'body-resumed', atMs: Date.now(), logicalUrl: served.logicalUrl, ...report });
      },
      onSettled: () => settle(),
    });
    if (body === response.body) return response;
    // The worker's code runs until the body ends: keep the worker alive that long.
    served.waitUntil(settled);
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  }
}
