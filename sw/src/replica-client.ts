/**
 * The smart client of Web++ (paper Section 3) as one object that both integration paths
 * share: the bundled worker (webpp-sw.ts) and the Workbox strategy (workbox.ts). One bound
 * request goes down the path once, each stage calling the next:
 *
 *   route.ts → plan.ts → attempt.ts → serve.ts → learn.ts
 *
 * with cross-cutting work as lifecycle plugins (plugins.ts) that the stages call by name.
 * The decisions (plan, timeouts, hedges, failover, refreshes and probes) are @webpp/core's
 * client engine with the policy named in the options (packages/core/src/policies), driven
 * with fetch and real timers (fetch-io.ts). Its parts are built in assemble.ts. Anything
 * unexpected in its own logic falls back to a plain fetch (fail open).
 */
import { serverOf } from '@webpp/core';
import type { ClientPolicy } from '@webpp/core';
import { assemble } from './assemble.js';
import { learnPreloaded, preloadFirst } from './cold-navigation.js';
import type { ClientParts } from './assemble.js';
import type { BindingsStore } from './bindings-store.js';
import type { ReplicaClientOptions } from './client-options.js';
import type { WorkerOptions } from './config.js';
import { relocateEmbeds } from './embed-relocation.js';
import type { RelocateQuery } from './embed-relocation.js';
import type { IntegrityStage } from './integrity-stage.js';
import type { WorkerStateSnapshot } from './messages.js';
import { observeRequest } from './observe.js';
import type { OfflineCopies } from './offline-copies.js';
import { listenToPages } from './page-messages.js';
import { plan } from './plan.js';
import type { RespondIO } from './plugins.js';
import type { PolicyStore } from './policy-store.js';
import { policyServerViews, policyTableJSON } from './policy-views.js';
import { Router } from './route.js';
import type { Route } from './route.js';
import type { StateReporter } from './state-reporter.js';
import { BINDINGS_KEY, CONTROL_KEY, DIGESTS_KEY, LATENCY_TABLE_KEY, PAGES_KEY, readAll } from './storage.js';
import { SW_VERSION } from './version.js';
import type { WorkerEngine } from './worker-engine.js';

export type { RespondIO } from './plugins.js';
export type { ReplicaClientOptions } from './client-options.js';

export type { Route } from './route.js';

/**
 * How long, from the worker's start, a request waits for the stored state (one IndexedDB
 * read) before it is sent as it is, as if there were no worker (fail open). The read took
 * 5–24 ms at a cold start in the page-cost traces (machine load 12–30); one that takes a
 * second is a blocked or broken database (another tab's version change, a stalled disk),
 * and a page must not wait on it.
 */
const RESTORE_WAIT_MS = 1_000;

/** A stage that may answer a fetch event before route and respond (batch transmission). */
export interface FrontStage {
  /** Answers the event (respondWith) and returns true when it handles it. Never throws. */
  handleFetch(event: FetchEvent): boolean;
}

export class ReplicaClient {
  readonly options: WorkerOptions;
  readonly configErrors: string[];
  readonly policy: ClientPolicy;
  readonly engine: WorkerEngine;
  readonly store: PolicyStore;
  readonly bindings: BindingsStore;
  readonly reporter: StateReporter;
  readonly offline: OfflineCopies;
  /** Content integrity (NO_INTEGRITY unless the integrity add-on is on). */
  readonly integrity: IntegrityStage;
  /** Resolves when the stored state and bindings are loaded (never rejects). */
  readonly ready: Promise<void>;
  private loaded = false;
  private restoreDeadline: Promise<false> | undefined;
  /** Its parts (assemble.ts), for the Workbox plugins (workbox.ts), which the bundled worker does not carry. */
  readonly parts: ClientParts;
  private readonly router: Router;
  private readonly startedAtMs = Date.now();
  private messageListenerAttached = false;
  /** The page the latest navigation loads (FetchEvent.resultingClientId, '' when unknown), until a page asks for the state's write after its load. */
  private loadingPage: string | undefined;
  private batching: FrontStage | undefined;

  constructor(init: ReplicaClientOptions = {}) {
    const parts = assemble(init);
    this.parts = parts;
    const { selfOrigin, ownScriptPaths, bindings, killSwitch, ownOnly } = parts;
    this.router = new Router({
      selfOrigin,
      ownScriptPaths,
      bindings,
      isOff: () => killSwitch.isOff,
      isLoaded: () => this.loaded,
      isOwnOnly: (url) => ownOnly.has(url),
      goesDirect: (request, resolved, clientId) => parts.direct.goesDirect(request, resolved, clientId),
    });
    ({ options: this.options, configErrors: this.configErrors, policy: this.policy, engine: this.engine, store: this.store, bindings: this.bindings, reporter: this.reporter, offline: this.offline, integrity: this.integrity } = parts);
    this.ready = this.load();
  }

  /** True until the site switched the worker off. */
  get isEnabled(): boolean {
    return !this.parts.killSwitch.isOff;
  }

  /**
   * Synchronous and cheap: decides whether the worker answers this request at all. Called
   * for every request the page makes, so it does no more than a method check, a prefix
   * test and one bindings lookup.
   */
  route(request: Request, clientId?: string): Route {
    return this.router.route(request, clientId);
  }

  /**
   * route() for a fetch event: with the page that made the request (FetchEvent.clientId), and
   * noting which page a navigation loads (its proof of life: direct.ts).
   */
  routeEvent(event: FetchEvent): Route {
    const route = this.route(event.request, event.clientId || undefined);
    if (route !== 'pass') {
      this.parts.direct.noteNavigation(event.request, event.resultingClientId);
      if (event.request.mode === 'navigate') this.loadingPage = event.resultingClientId;
    }
    return route;
  }

  /**
   * Answers a request route() did not pass. Never rejects: an internal error falls back to
   * a plain fetch of the original request; a network failure of an unbound request becomes
   * a network error, as it would have been without the worker.
   */
  async respond(request: Request, io: RespondIO): Promise<Response> {
    this.reporter.count('intercepted');
    try {
      // The stored state first (a request planned on an empty state goes to the origin's first replica), within a bound.
      if (!this.loaded) {
        const arrivedMs = performance.now();
        const atMs = Date.now();
        const restored = this.restoredInTime();
        // A cold worker's navigation: the preload's answer, when it comes first and serves, does not wait for it (cold-navigation.ts).
        const early = io.preload && !this.offline.enabled ? await preloadFirst(io.preload, restored) : undefined;
        if (early) {
          const totalMs = performance.now() - arrivedMs;
          io.waitUntil(restored.then((inTime) => inTime && this.isEnabled && learnPreloaded(this.parts, request, this.router.resolved(request), early, io, atMs, totalMs)));
          return early;
        }
        if (!(await restored)) return await io.fetch(request).catch(() => Response.error());
      }
      if (this.bindings.learning) await this.bindings.settled();
      const enabled = this.isEnabled;
      const resolved = enabled ? this.router.resolved(request) : undefined;
      if (resolved && (request.method === 'GET' || request.method === 'HEAD')) return await plan(request, resolved, io, this.parts.path);
      if (enabled && this.router.isObservable(request)) {
        const response = await observeRequest(request, io, { reporter: this.reporter, headers: this.parts.headers, offline: this.offline, ...(this.offline.enabled ? {} : { quiet: (quiet: Request) => this.router.noteQuiet(quiet) }) });
        const written = this.parts.direct.pageAnswered(request, response.type !== 'error' && response.status < 500);
        if (written) io.waitUntil(written);
        return response;
      }
      return await io.fetch(request).catch(() => Response.error());
    } catch (error) {
      this.reporter.count('internalErrors');
      this.reporter.event({ type: 'internal-error', atMs: Date.now(), message: String(error), url: request.url });
      return fetch(request).catch(() => Response.error());
    }
  }

  /** The state a page (dashboard, tests) asks for. */
  snapshot(): WorkerStateSnapshot {
    const nowMs = Date.now();
    return {
      type: 'webpp:state',
      version: SW_VERSION,
      enabled: this.isEnabled,
      startedAtMs: this.startedAtMs,
      nowMs,
      policy: this.policy.name,
      preset: this.options.preset,
      config: { ...this.options.selection },
      configErrors: [...this.configErrors],
      bindings: { count: this.bindings.size, directoryVersion: this.bindings.directoryVersion },
      servers: policyServerViews(this.policy, nowMs),
      table: policyTableJSON(this.policy),
      counters: { ...this.reporter.counters },
      decisions: this.reporter.recentDecisions(),
      events: this.reporter.recentEvents(),
      offline: { enabled: this.offline.enabled, ...this.offline.snapshot() },
      pushed: this.parts.pushed.views(),
      aggregate: this.parts.aggregate.view(),
    };
  }

  /**
   * Puts a stage in front of the bind and observe stages: batch transmission and the
   * logical-URL cache (batch/batch-stage.ts, installBatching; docs/batching.md). The first
   * stage installed holds.
   */
  useFrontStage(stage: FrontStage): void {
    this.batching ??= stage;
  }

  /**
   * The worker's whole fetch pipeline for one event: the batch stage (if enabled), then
   * route and respond. Returns false when the worker does not answer (no respondWith), so
   * the browser fetches the request itself. `own`: how the event's requests are sent, when not
   * with a plain fetch, and what is already on its way for it (the bundled worker's: a
   * navigation's preload, navigation-preload.ts; RespondIO.preferred and RespondIO.preload).
   * What a bound request taught is learnt once the page has its answer (RespondIO.afterResponse, learn.ts).
   */
  handleFetch(event: FetchEvent, own: Partial<Pick<RespondIO, 'fetch' | 'preferred' | 'preload'>> = {}): boolean {
    if (this.batching?.handleFetch(event)) return true;
    let route: Route;
    try {
      route = this.routeEvent(event);
    } catch {
      return false; // fail open: the browser fetches as if there were no worker
    }
    if (route === 'pass') return false;
    const answer: Promise<Response> = this.respond(event.request, {
      fetch: (request) => fetch(request),
      ...own,
      waitUntil: (promise) => event.waitUntil(promise),
      // Chained after respondWith's own reaction to the same promise: the answer leaves the
      // worker first. When the event is over (a late answer of another replica), at once.
      afterResponse: (work) => {
        try {
          event.waitUntil(answer.then(work));
        } catch {
          work();
        }
      },
    });
    event.respondWith(answer);
    return true;
  }

  /** Writes pending policy state and bindings changes to IndexedDB now. */
  async flush(): Promise<void> {
    this.parts.samples.expire();
    await Promise.all([this.store.flushNow(), this.bindings.flushNow(), this.integrity.flush(), this.offline.flush(), this.parts.direct.flushNow()]);
  }

  /**
   * Answers the page script's messages ({type: 'webpp:state'} and {type: 'webpp:flush'},
   * replies on the transferred MessagePort). Idempotent.
   */
  attachMessageListener(scope: Pick<ServiceWorkerGlobalScope, 'addEventListener'>): void {
    if (this.messageListenerAttached) return;
    this.messageListenerAttached = true;
    listenToPages(scope, {
      ready: this.ready,
      snapshot: () => this.snapshot(),
      // The page script asks for the write at its load's end and when hidden. A page hidden
      // because the visitor went on to another page of the site would write in the middle of
      // that page's load (its fetch events wait for this thread): its changes wait for the
      // batch (flushDelayMs) or the new page's request after its load, which ends the wait.
      flush: (fromPage) => {
        if (fromPage && this.loadingPage && fromPage !== this.loadingPage) return Promise.resolve();
        if (fromPage) this.loadingPage = undefined;
        return this.flush();
      },
      relocate: (query) => this.relocateEmbeds(query),
      timing: (pageId, report) => this.parts.direct.report(pageId, report.entries, report.failedUrls),
    });
  }

  /** Where a page's <object>/<embed> elements should load from (embed-relocation.ts). */
  private relocateEmbeds(query: RelocateQuery): Promise<(string | null)[]> {
    const failed = new Set(policyServerViews(this.policy, Date.now()).filter((view) => view.state === 'failed').map((view) => view.server));
    return relocateEmbeds(query, {
      resolve: (url) => (this.isEnabled ? this.router.resolved(new Request(url)) : undefined),
      ordered: (resolved) => {
        const physicalByServer = new Map(resolved.physicalUrls.map((url) => [serverOf(url), url]));
        const plan = this.engine.plan({ logicalUrl: resolved.logical, method: 'GET', candidates: [...physicalByServer.keys()] }, (server) => physicalByServer.get(server));
        return plan.map((attempt) => attempt.target);
      },
      isFailed: (server) => failed.has(server),
      servedPage: (pageUrl) => {
        const decisions = this.reporter.recentDecisions();
        for (let i = decisions.length - 1; i >= 0; i--) if (decisions[i]!.navigation && decisions[i]!.logicalUrl === pageUrl) return decisions[i]!.servedBy;
        return undefined;
      },
      fetch: this.parts.plainFetch,
    });
  }

  /**
   * Resolves true once the stored state is restored, or false when it is not within
   * RESTORE_WAIT_MS of the worker's start (a blocked IndexedDB): the request then fails open.
   * The restore still completes later and merges with what was learned meanwhile.
   */
  private restoredInTime(): Promise<boolean> {
    this.restoreDeadline ??= new Promise<false>((resolve) => setTimeout(() => resolve(false), Math.max(0, this.startedAtMs + RESTORE_WAIT_MS - Date.now())));
    return Promise.race([this.ready.then(() => true), this.restoreDeadline]);
  }

  private async load(): Promise<void> {
    try {
      // The whole state in one read (one IndexedDB transaction): the first fetch event waits for it.
      const [control, table, bindings, digests, pages] = await readAll(this.parts.storage, [CONTROL_KEY, LATENCY_TABLE_KEY, BINDINGS_KEY, DIGESTS_KEY, PAGES_KEY]);
      const { trust, killSwitch } = this.parts;
      this.store.restore(table);
      this.parts.direct.restore(pages);
      this.bindings.restore(bindings);
      this.integrity.restore(digests);
      trust.learnServers(this.bindings.held());
      trust.learnOwnVersion(this.bindings.directoryVersion);
      // Installed again soon after a switch-off: stay off (and tell the pages again).
      if (await killSwitch.restore(control)) {
        this.reporter.event({ type: 'control-off', atMs: Date.now(), from: 'stored switch-off' });
      }
    } catch {
      // No IndexedDB (or a broken one): start empty; binding still works from memory.
    } finally {
      this.loaded = true;
    }
  }
}
