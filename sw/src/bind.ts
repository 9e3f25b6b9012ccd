/**
 * A bound request, top to bottom: plan (core's engine asks the policy; stale bindings go
 * last) → attempt (core's state machine, with fetch) → serve (the winner under the logical
 * URL, its body checked and resumable; an offline copy or the best failed answer when no
 * replica served) → learn (bindings from every answer, samples to the policy, the decision
 * record to the lifecycle callbacks), then the background requests inside waitUntil.
 */
import { classifyStatus, serverOf } from '@webpp/core';
import type { ClientEngine, EngineAttempt, ResolvedBinding, RunResult, ServerId } from '@webpp/core';
import type { ControlCheck } from './control-check.js';
import { decisionRecord } from './decision-record.js';
import { navigationErrorPage } from './error-page.js';
import type { ExchangeSender } from './fetch-io.js';
import type { HeaderLearning } from './header-learning.js';
import type { IntegrityStage } from './integrity-stage.js';
import type { EngineHooks } from './engine-hooks.js';
import { mediaServedResponse } from './media-range.js';
import type { DecisionRecord } from './messages.js';
import { failedEverywhere } from './offline-copies.js';
import type { OfflineCopies } from './offline-copies.js';
import { buildPhysicalRequest } from './physical-request.js';
import type { PhysicalRequestOptions } from './physical-request.js';
import type { ResumeStage } from './resume.js';
import type { SampleStage } from './samples.js';
import { servedResponse } from './served-response.js';
import { SizeMemory } from './size-memory.js';
import { carriesCredentials, isPersonalAnswer } from './personal-answers.js';
import type { PersonalUrls } from './personal-answers.js';
import { isSameOrigin } from './physical-request.js';
import type { ProbeUrls, StaleBindings } from './server-memory.js';
import type { StateReporter } from './state-reporter.js';
import type { TrustRule } from './trust.js';

/** What the caller of respond() provides: how to fetch, and how to extend the event's life. */
export interface RespondIO {
  fetch: (request: Request) => Promise<Response>;
  waitUntil: (promise: Promise<unknown>) => void;
}

export interface BindStageOptions {
  engine: ClientEngine<Response, ExchangeSender>;
  selfOrigin: string;
  reporter: StateReporter;
  headers: HeaderLearning;
  samples: SampleStage;
  integrity: IntegrityStage;
  resume: ResumeStage;
  offline: OfflineCopies;
  controlCheck: ControlCheck;
  trust: TrustRule;
  probeUrls: ProbeUrls;
  staleBindings: StaleBindings;
  /** Logical URLs whose answers are personal (personal-answers.ts). */
  personal: PersonalUrls;
  /** Wraps the fetch of every physical request (the connection queue counts them per host). */
  track(fetch: (request: Request) => Promise<Response>): (request: Request) => Promise<Response>;
  /** After each request: the policy's background requests and a batched state write. */
  afterRequest(candidates: readonly ServerId[]): Promise<void>;
  /** Lifecycle callback: one bound request was decided (telemetry). */
  decisionMade(decision: DecisionRecord): void;
  /** Engine v3's facts from the worker: body ends, sizes, a second decision at the head (engine-hooks.ts). */
  engineHooks?: EngineHooks;
}

/** The body size the binding row announces, when it has one (issue 11: size-aware policies). */
function sizeOf(resolved: ResolvedBinding): { sizeBytes?: number } {
  const sizeBytes = (resolved.binding as { sizeBytes?: unknown }).sizeBytes;
  return typeof sizeBytes === 'number' && Number.isFinite(sizeBytes) && sizeBytes >= 0 ? { sizeBytes } : {};
}

export class BindStage {
  /** Sizes of earlier responses, for resources whose binding carries none. */
  private readonly sizes = new SizeMemory();

  constructor(private readonly options: BindStageOptions) {}

  async handle(request: Request, resolved: ResolvedBinding, io: RespondIO): Promise<Response> {
    const { engine, reporter, integrity } = this.options;
    const arrivedMs = performance.now();
    const atMs = Date.now();
    reporter.count('bound');

    // plan
    const physicalByServer = new Map<ServerId, string>();
    const size = this.plannedSize(resolved);
    for (const url of resolved.physicalUrls) {
      const server = serverOf(url);
      if (!physicalByServer.has(server)) physicalByServer.set(server, url);
      this.options.probeUrls.remember(server, url, size.sizeBytes);
    }
    const candidates = [...physicalByServer.keys()];
    const plan = engine.plan(
      { logicalUrl: resolved.logical, method: request.method, candidates, ...size },
      (server) => physicalByServer.get(server),
      // A replica that answered 404/410 for this directory version goes last (it may be back later).
      (server) => this.options.staleBindings.isStale(physicalByServer.get(server)!, resolved.directoryVersion),
    );
    const bindMs = performance.now() - arrivedMs;

    // attempt
    const result = await integrity.run(request, resolved.logical, plan, (specs) => this.attempt(specs, request, resolved, io));
    io.waitUntil(this.options.afterRequest(candidates));

    // serve
    const response = await this.serve(request, resolved, io, plan, result);

    // learn: the decision, for the lifecycle callbacks
    this.options.decisionMade(
      decisionRecord({ id: reporter.decisionId(), atMs, request, logicalUrl: resolved.logical, policy: engine.policy.name, result, bindMs, totalMs: performance.now() - arrivedMs }),
    );
    return response;
  }

  /**
   * The body size the policy plans with: the binding row's (docs/protocol.md, "Binding
   * sizes"; only for the very URL it binds, not a query variant), else an earlier response's.
   */
  private plannedSize(resolved: ResolvedBinding): { sizeBytes?: number } {
    const fromBinding = resolved.logical === resolved.binding.logical ? sizeOf(resolved) : {};
    if (fromBinding.sizeBytes !== undefined) return fromBinding;
    const learnt = this.sizes.sizeOf(resolved.logical);
    return learnt === undefined ? {} : { sizeBytes: learnt };
  }

  /**
   * One run of the engine over `plan` (core's state machine: timeouts, failover, hedges, the
   * deadline, the fallback answer, run with fetch-io.ts); the page's abort ends it.
   */
  private attempt(plan: readonly EngineAttempt[], request: Request, resolved: ResolvedBinding, io: RespondIO, resume?: PhysicalRequestOptions['resume']): Promise<RunResult<Response>> {
    const { engine } = this.options;
    const sender = this.sender(request, resolved, io, resume);
    const signal = request.signal;
    return new Promise((resolve) => {
      if (signal?.aborted) return resolve({ kind: 'aborted', attempts: [] });
      const onAbort = (): void => cancel();
      const cancel = engine.run(
        plan,
        (result) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(result);
        },
        { context: sender, purpose: resume ? 'resume' : 'request' },
      );
      signal?.addEventListener('abort', onAbort);
    });
  }

  private async serve(request: Request, resolved: ResolvedBinding, io: RespondIO, plan: readonly EngineAttempt[], result: RunResult<Response>): Promise<Response> {
    const { reporter, offline, integrity } = this.options;
    const waitUntil = (promise: Promise<unknown>): void => io.waitUntil(promise);
    const navigation = request.mode === 'navigate';
    // Stale-if-error: a saved copy only when no replica gave a live answer (offline-cache.ts).
    const offlineCopy = failedEverywhere(result) ? await offline.rescue(request, resolved.logical) : undefined;
    if (offlineCopy) {
      reporter.count('failed');
      if (result.kind === 'failed') result.fallback?.response.body?.cancel().catch(() => undefined);
      return offlineCopy;
    }
    if (result.kind === 'served') {
      reporter.count('served');
      const own = await this.personalFromOwnOrigin(request, resolved, io, result);
      if (own) return own;
      // A media range is answered with one chunk held whole (media-range.ts).
      const first = await mediaServedResponse(request, servedResponse(request, result.winner.target, result.response));
      // Decide again at the head (engine-hooks.ts): the body may come from a second fetch.
      const served = this.options.engineHooks?.decideAgainAtHead(first, { request, logicalUrl: resolved.logical, result, plan, sender: this.sender(request, resolved, io) }) ?? first;
      if (navigation && result.winner.server !== this.options.selfOrigin) io.waitUntil(this.options.controlCheck.afterReplicaNavigation(resolved.logical));
      const resumable = this.options.resume.wrap(served, {
        request,
        logicalUrl: resolved.logical,
        winner: result.winner,
        plan,
        fetchRest: (rest, range) => this.fetchRest(rest, range, request, resolved, io),
        waitUntil,
      });
      // Verified bytes only (integrity.ts) are kept for offline use (offline-cache.ts).
      return offline.keep(request, resolved.logical, integrity.guard(request, resumable), waitUntil);
    }
    if (result.kind === 'failed' && result.fallback) {
      // Every replica failed, but one answered (e.g. 404 everywhere): that answer is the truth.
      reporter.count('failed');
      const answer = servedResponse(request, result.fallback.attempt.target, result.fallback.response);
      return offline.keep(request, resolved.logical, answer, waitUntil); // a 404/410 deletes the copy
    }
    if (result.kind === 'failed') reporter.count('failed');
    return navigation && result.kind === 'failed' ? navigationErrorPage(resolved.logical, result.attempts) : Response.error();
  }

  /**
   * A replica on another origin answered a request that carries the visitor's cookies with
   * an answer meant for one user: it got no cookies, so that answer is not this visitor's.
   * The page's own request goes to the own origin instead (personal-answers.ts).
   */
  private async personalFromOwnOrigin(request: Request, resolved: ResolvedBinding, io: RespondIO, result: RunResult<Response> & { kind: 'served' }): Promise<Response | undefined> {
    const { selfOrigin, personal, reporter } = this.options;
    if (isSameOrigin(result.winner.target, selfOrigin) || !carriesCredentials(request, selfOrigin) || !isPersonalAnswer(result.response)) return undefined;
    personal.note(resolved.logical);
    const own = await io.fetch(request).catch(() => undefined);
    if (!own || own.type === 'error' || own.status >= 500) return undefined; // the own origin is down: the replica's page still loads
    result.response.body?.cancel().catch(() => undefined);
    reporter.count('personalFromOwnOrigin');
    return own;
  }

  /** The rest of a broken body from the remaining plan (a 'resume' run). */
  private async fetchRest(
    plan: readonly EngineAttempt[],
    rest: { range: string; ifRange: string | undefined },
    request: Request,
    resolved: ResolvedBinding,
    io: RespondIO,
  ): Promise<{ server: ServerId; response: Response } | undefined> {
    const result = await this.attempt(plan, request, resolved, io, { range: rest.range, ifRange: rest.ifRange });
    if (result.kind === 'served') return { server: result.winner.server, response: result.response };
    if (result.kind === 'failed') result.fallback?.response.body?.cancel().catch(() => undefined);
    return undefined;
  }

  /** How this request's exchanges reach the replicas, and what every answer teaches. */
  private sender(request: Request, resolved: ResolvedBinding, io: RespondIO, resume?: PhysicalRequestOptions['resume']): ExchangeSender {
    const { selfOrigin, headers, samples, trust } = this.options;
    const mayBeCached = !resume && request.method === 'GET' && request.cache !== 'no-store' && request.cache !== 'reload';
    const waitUntil = (promise: Promise<unknown>): void => io.waitUntil(promise);
    return {
      build: (exchange, signal) => buildPhysicalRequest(request, exchange.target, { selfOrigin, signal, ...(resume ? { resume } : {}) }),
      fetch: this.options.track(io.fetch),
      onResponse: (exchange, response, elapsedMs, sentAtMs) => {
        const outcome = classifyStatus(response.status);
        if (outcome !== 'server-error') {
          samples.add(exchange, response, elapsedMs, sentAtMs, mayBeCached);
          if (!resume) this.sizes.learn(resolved.logical, response);
          headers.learnFrom(response, resolved.logical, waitUntil, trust.isOwn(exchange.server, response.url) ? undefined : exchange.server);
        }
        if (outcome === 'stale') {
          this.options.staleBindings.note(exchange.target, resolved.directoryVersion);
          this.options.probeUrls.forget(exchange.server, exchange.target);
        }
      },
      headArrived: (exchange, physical, response, events) => this.options.engineHooks?.headArrived(resolved.logical, exchange, physical, response, events),
    };
  }
}
