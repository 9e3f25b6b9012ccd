/**
 * The worker's lifecycle plugins, Workbox-style (workbox-strategies' StrategyHandler and its
 * plugin callbacks): cross-cutting work (header learning, samples, integrity, resume, offline
 * copies, personal-answer checks, telemetry and decision records, engine v3's hooks) hooks
 * into the request path through named callbacks instead of flags. The path calls each
 * callback in one place, in this order (docs/service-worker.md, "The request path"):
 *
 *   attempt.ts  handlerWillStart, requestWillFetch → fetchDidFail | fetchDidSucceed → headDidArrive,
 *               attemptsDidFinish; bodyWasCancelled (when the page cancels a body a plugin streams)
 *   serve.ts    handlerDidError | replicaAnswerWillBeUsed → handlerWillRespond, cacheWillUpdate
 *   learn.ts    handlerDidRespond → handlerDidComplete
 *
 * Plugins run in the order they were given; a plugin that throws in a callback is skipped
 * for that call (the path fails open), except in the callbacks that produce the page's
 * response, where the error reaches the client's catch-all (a plain fetch).
 */
import type { EngineAttempt, Exchange, ExchangeEvents, ResolvedBinding, RunResult, ServerId } from '@webpp/core';
import type { ExchangeSender } from './fetch-io.js';
import type { PhysicalRequestOptions } from './physical-request.js';

/** What the caller of respond() provides: how to fetch, and how to extend the event's life. */
export interface RespondIO {
  fetch: (request: Request) => Promise<Response>;
  waitUntil: (promise: Promise<unknown>) => void;
  /**
   * A server whose answer `fetch` already has on its way (a navigation's preload, at the own
   * origin): the plan puts it first where the policy predicts no gain elsewhere (core's
   * PlanInput.preferred; navigation-preload.ts).
   */
  preferred?: string;
  /**
   * A navigation's preload response (navigation-preload.ts): a cold worker gives it to the page
   * without waiting for its stored state when it comes first and serves (cold-navigation.ts).
   */
  preload?: Promise<Response | undefined>;
  /**
   * Runs `work` once the page has its response: the fetch handler chains it on the promise it
   * gave respondWith, after the browser's own reaction, so that the answer leaves the worker
   * before what the request taught is learnt (learn.ts). Without it (a caller that is not a
   * fetch event), `work` runs at once.
   */
  afterResponse?: (work: () => void) => void;
}

/** Runs `work` once the page has its response (RespondIO.afterResponse), or at once without a fetch event. */
export function afterResponse(io: RespondIO, work: () => void): void {
  (io.afterResponse ?? ((now) => now()))(work);
}

/** A range of a body to fetch again (resumable-body.ts), for a 'resume' run. */
export type ResumeRange = NonNullable<PhysicalRequestOptions['resume']>;

/** One bound request on its way down the path, as every stage and plugin sees it (Workbox's StrategyHandler). */
export interface BoundRequest {
  readonly request: Request;
  readonly resolved: ResolvedBinding;
  readonly logicalUrl: string;
  readonly io: RespondIO;
  /** performance.now() and Date.now() when the request arrived. */
  readonly arrivedMs: number;
  readonly atMs: number;
  /** How long planning took (ms). */
  readonly planMs: number;
  readonly candidates: readonly ServerId[];
  readonly plan: readonly EngineAttempt[];
  /** How this request's exchanges are sent (attempt.ts): the page's request rebuilt per replica. */
  readonly sender: ExchangeSender;
  /** Runs `plan` again with the engine (a 'resume' run for `range`, else a 'request' run); the page's abort ends it. */
  attemptAgain(plan: readonly EngineAttempt[], range?: ResumeRange): Promise<RunResult<Response>>;
  /** How the exchanges of a 'resume' run for `range` are sent (the page's request for the rest of the body), for a plugin that runs the engine itself (head-race.ts). */
  senderForRest(range: ResumeRange): ExchangeSender;
  /** The page cancelled the body a plugin streams (the bodyWasCancelled callbacks). */
  bodyCancelled(): void;
}

/** One answer of one exchange of a bound request (also one the engine no longer waits for). */
interface FetchAnswer {
  bound: BoundRequest;
  exchange: Exchange;
  /** The physical request that was sent. */
  request: Request;
  response: Response;
  /** What its status means (core classifyStatus): 'server-error' teaches nothing but a failure. */
  outcome: 'served' | 'stale' | 'server-error';
  /** fetch() → headers, and the performance.now() reading just before fetch(). */
  elapsedMs: number;
  sentAtMs: number;
  /** A 'resume' run's exchange: the rest of a body, not a whole answer. */
  resume: boolean;
}

type Served = RunResult<Response> & { kind: 'served' };

export interface WorkerPlugin {
  /** attempt: a bound request was planned; its attempts start now. */
  handlerWillStart?(bound: BoundRequest): void;
  /** attempt: a physical request is about to be sent. */
  requestWillFetch?(request: Request, bound: BoundRequest): void;
  /** attempt: fetch() rejected. */
  fetchDidFail?(request: Request, error: unknown, bound: BoundRequest): void;
  /** attempt: an answer's head arrived (what every answer teaches: samples, sizes, bindings). */
  fetchDidSucceed?(answer: FetchAnswer): void;
  /** attempt: the head of an exchange the engine still waits for, after the engine heard of it. */
  headDidArrive?(answer: FetchAnswer, events: ExchangeEvents<Response>): void;
  /** attempt: the run ended; a plugin may run the rest of the plan (integrity: wrong bytes fail over). */
  attemptsDidFinish?(bound: BoundRequest, result: RunResult<Response>): Promise<RunResult<Response>>;
  /** serve: no replica gave a live answer; a plugin may answer (offline copies). */
  handlerDidError?(bound: BoundRequest, result: RunResult<Response>): Promise<Response | undefined>;
  /** serve: a replica served; a plugin may answer instead, and its answer goes to the page as it is (personal answers). */
  replicaAnswerWillBeUsed?(bound: BoundRequest, result: Served): Promise<Response | undefined>;
  /** serve: the served response for the page, which a plugin may wrap (hook C, resume, integrity). */
  handlerWillRespond?(bound: BoundRequest, result: Served, response: Response): Response;
  /** serve: the page's answer (served or a replica's failed answer), which a plugin may keep (offline copies). */
  cacheWillUpdate?(request: Request, logicalUrl: string, response: Response, waitUntil: RespondIO['waitUntil']): Response;
  /** serve: the page cancelled a body a plugin streams (resume.ts): the request's exchanges will not end on their own. */
  bodyWasCancelled?(bound: BoundRequest): void;
  /** learn: the page has its response (decision records, telemetry, the own-origin check). */
  handlerDidRespond?(bound: BoundRequest, result: RunResult<Response>, response: Response): void;
  /** learn, inside waitUntil, one plugin after the other: background work (refreshes, probes, state writes). */
  handlerDidComplete?(bound: BoundRequest): Promise<void>;
}

type Callback = keyof WorkerPlugin;

/** The plugins of a client, with each callback's list computed once. */
export class Lifecycle {
  private readonly byCallback = new Map<Callback, WorkerPlugin[]>();

  constructor(readonly plugins: readonly WorkerPlugin[]) {}

  /** The plugins that have `callback`, in order. */
  with<K extends Callback>(callback: K): readonly (WorkerPlugin & Required<Pick<WorkerPlugin, K>>)[] {
    let list = this.byCallback.get(callback);
    if (list === undefined) this.byCallback.set(callback, (list = this.plugins.filter((plugin) => plugin[callback] !== undefined)));
    return list as (WorkerPlugin & Required<Pick<WorkerPlugin, K>>)[];
  }

  /** Calls a notification callback on every plugin that has it; one plugin's throw does not stop the others. */
  notify<K extends Callback>(callback: K, ...args: Parameters<NonNullable<WorkerPlugin[K]>>): void {
    for (const plugin of this.with(callback)) {
      try {
        (plugin[callback] as (...values: unknown[]) => void).apply(plugin, args);
      } catch {
        // A plugin never breaks a page's request.
      }
    }
  }
}
