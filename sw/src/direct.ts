/**
 * Bound requests the worker cannot improve go to the network without it (issue 26: "no cost
 * where it cannot help"). A same-origin subresource whose plan would go to the own origin
 * first, alone, is what the browser would fetch itself: route.ts then returns 'pass' and the
 * fetch handler does not call respondWith, so the request costs what it costs without a
 * worker. Decided synchronously, from memory only, when all of this holds:
 *
 * - a GET subresource (not a navigation, no Range) and not a script (a page's script that
 *   fails is skipped and its later scripts run without it: no retry can keep their order),
 *   smaller than `resumeMinBytes` as far as
 *   the worker knows (larger bodies keep resume and the decision at the head; a size comes
 *   from the binding, an earlier answer, the page's Resource Timing or the policy's estimate);
 * - the binding's physical URL on the own origin is the request's own URL, and it has not
 *   answered 404/410 under this directory version (server-memory.ts, StaleBindings: the plan
 *   puts it last, so the worker asks another replica; a 404/410 the page's Resource Timing
 *   reports for a request left to the browser is noted there too);
 * - core's policy would send it to the own origin first with no hedge worth the worker's own
 *   per-request cost (ClientPolicy
 *   isSoleFirstChoice: measured, available, in the policy's equivalent set of the best,
 *   not spilling load; the policy's own estimates and tolerance, no threshold of the worker);
 * - the page's own navigation was answered by the own origin (proof of life, page by page:
 *   a page whose navigation another replica served, or whose elements failed to load, keeps
 *   every request with the worker and its failover). What the worker knows of each page is
 *   kept with its state (IndexedDB, PAGES_KEY): a worker the browser stopped (after about
 *   30 s idle) and woke again for a page still open knows that page once its state is
 *   restored, instead of taking every further request of it;
 * - it is not the set's exploration request: one request per set of replicas per
 *   `exploreEveryMs` (the policy's refreshMinIntervalMs, the most often it refreshes a
 *   server) goes through the worker anyway, so the policy keeps planning, drawing among its
 *   equivalent servers and running its refreshes and probes;
 * - it is not an image or stylesheet that this page asked for before and had left to the
 *   browser: that second request is the page script's retry of a failed element (webpp.ts,
 *   at once in the element's `error` event, before the worker can hear of the failure); it
 *   goes through the worker and its failover. (A page's repeated fetch() stays direct.)
 *
 * The own origin's answers to requests left to the browser are still measured: the page
 * script posts the page's Resource Timing entries (webpp.ts), and those of the URLs passed on
 * become samples of the own origin (responseStart − requestStart, as ttfb-sampler.ts).
 */
import { serverOf } from '@webpp/core';
import type { ResolvedBinding, ServerId } from '@webpp/core';
import { BoundedMap } from './_private/bounded-map.js';
import { isSameOrigin } from './physical-request.js';
import { PersistedState } from './_private/persisted-state.js';
import { announcedSize } from './plan.js';
import type { WorkerPlugin } from './plugins.js';
import type { StaleBindings } from './server-memory.js';
import type { SizeMemory } from './size-memory.js';
import type { StateReporter } from './state-reporter.js';
import { PAGES_KEY } from './storage.js';
import type { KeyValueStore } from './storage.js';
import type { WorkerEngine } from './worker-engine.js';

/**
 * One Resource Timing entry as the page script posts it (webpp.ts, 'webpp:timing': an array
 * [name, requestStart, responseStart, responseEnd, transferSize, encodedBodySize,
 * decodedBodySize, responseStatus], the page script's bytes being every visitor's).
 */
export interface PageTimingEntry {
  name: string;
  requestStart: number;
  responseStart: number;
  responseEnd: number;
  transferSize: number;
  encodedBodySize: number;
  decodedBodySize: number;
  /** 0 when the browser does not say. */
  responseStatus: number;
}

export interface DirectRouteOptions {
  selfOrigin: string;
  engine: WorkerEngine;
  sizes: SizeMemory;
  reporter: StateReporter;
  /** Bodies this large or more stay with the worker (resume.ts). */
  resumeMinBytes: number;
  /** One request per set of replicas per this interval goes through the worker anyway. */
  exploreEveryMs: number;
  /** False while a feature needs every bound answer (offline copies keep them). */
  enabled: boolean;
  /** Physical URLs that answered 404/410 (server-memory.ts): the own origin's is then not the plan's first. */
  staleBindings: StaleBindings;
  /** Where what the worker knows of each page is kept across worker starts (batched writes, as the other stores). */
  storage?: KeyValueStore;
  flushDelayMs?: number;
  now?: () => number;
}

/** A URL some bound request of which was left to the browser (DirectRoute.passed). */
interface PassedUrl {
  pending: number;
  directoryVersion: number;
  /** The last pages (client ids, at most LEFT_PAGES) that had it left to the browser as an image or stylesheet: their next request of it is the worker's. */
  leftTo: string[];
}

/** Pages, sets of replicas and URLs remembered at most (bounded, least recent first out). */
const PAGES = 256;
const SETS = 256;
const PASSED_URLS = 2_000;
/**
 * Pages remembered per URL left to the browser. A page's retry of a failed element comes at
 * once (its `error` event), so only the pages that asked for the same URL while that one
 * element was loading can come between.
 */
const LEFT_PAGES = 16;

export class DirectRoute {
  private readonly ownServer: ServerId;
  private readonly now: () => number;
  /** Page (client id) → its navigation was answered by the own origin, and nothing of it failed since. */
  private readonly pages = new BoundedMap<string, boolean>(PAGES);
  /** Navigation requests → the id of the page they load (FetchEvent.resultingClientId). */
  private readonly navigations = new WeakMap<Request, string>();
  /** Set of replicas → when a request of it last went through the worker to explore. */
  private readonly exploredAtMs = new BoundedMap<string, number>(SETS);
  /**
   * URL → what the worker knows of its requests left to the browser: how many still await the
   * page's Resource Timing (`pending`), and under which directory version. A URL never left
   * has no entry, so a request the worker takes writes nothing here.
   */
  private readonly passed = new BoundedMap<string, PassedUrl>(PASSED_URLS);
  private readonly persisted: PersistedState | undefined;

  constructor(private readonly options: DirectRouteOptions) {
    this.ownServer = serverOf(`${options.selfOrigin}/`);
    this.now = options.now ?? Date.now;
    const { storage, flushDelayMs = 1_000 } = options;
    if (storage && options.enabled) this.persisted = new PersistedState({ storage, key: PAGES_KEY, flushDelayMs, snapshot: () => this.pages.toArray() });
  }

  /**
   * The pages a stopped worker knew (read with the rest of the state at start-up); what this
   * worker learned since it started wins. Malformed entries are dropped.
   */
  restore(stored: unknown): void {
    if (!Array.isArray(stored)) return;
    const learned = this.pages.toArray();
    for (const entry of (stored as unknown[]).slice(-PAGES)) {
      const [page, provedAlive] = Array.isArray(entry) ? (entry as unknown[]) : [];
      if (typeof page === 'string' && typeof provedAlive === 'boolean') this.pages.set(page, provedAlive);
    }
    for (const [page, provedAlive] of learned) this.pages.set(page, provedAlive);
  }

  /** Writes what changed now (the page script asks at the end of each load). */
  flushNow(): Promise<void> {
    return this.persisted?.flushNow() ?? Promise.resolve();
  }

  /** route.ts: true when this bound request is left to the browser. */
  goesDirect(request: Request, resolved: ResolvedBinding, clientId: string | undefined): boolean {
    const { url } = request;
    if (clientId === undefined || !this.decide(request, resolved, clientId)) return false;
    const known = this.passed.get(url);
    const leftTo = known?.leftTo ?? [];
    if ((request.destination === 'image' || request.destination === 'style') && leftTo.push(clientId) > LEFT_PAGES) leftTo.shift();
    this.passed.set(url, { pending: (known?.pending ?? 0) + 1, directoryVersion: resolved.directoryVersion, leftTo });
    return true;
  }

  private decide(request: Request, resolved: ResolvedBinding, clientId: string): boolean {
    const { options } = this;
    if (!options.enabled || request.mode === 'navigate' || request.destination === 'script' || request.method !== 'GET' || request.headers.has('range')) return false;
    if (this.pages.get(clientId) !== true || this.passed.get(request.url)?.leftTo.includes(clientId)) return false;
    if (!isSameOrigin(request.url, options.selfOrigin) || !resolved.physicalUrls.includes(request.url)) return false;
    // The own origin said it does not hold this URL: the plan asks another replica first.
    if (options.staleBindings.isStale(request.url, resolved.directoryVersion)) return false;
    const { logical } = resolved;
    const sizeBytes = announcedSize(resolved) ?? options.sizes.sizeOf(logical) ?? options.engine.policy.estimateSizeBytes?.(logical);
    if (sizeBytes !== undefined && sizeBytes >= options.resumeMinBytes) return false;
    const candidates = [...new Set(resolved.physicalUrls.map(serverOf))];
    if (!options.engine.isSoleFirstChoice({ logicalUrl: logical, method: 'GET', candidates, ...(sizeBytes === undefined ? {} : { sizeBytes }) }, this.ownServer)) return false;
    const set = candidates.sort().join(' ');
    const nowMs = this.now();
    const exploredAtMs = this.exploredAtMs.get(set);
    if (exploredAtMs === undefined || nowMs - exploredAtMs >= options.exploreEveryMs) {
      this.exploredAtMs.set(set, nowMs);
      return false;
    }
    options.reporter.count('direct');
    return true;
  }

  /** The fetch handler: this navigation loads the page with this id. */
  noteNavigation(request: Request, resultingClientId: string | undefined): void {
    if (request.mode === 'navigate' && resultingClientId) this.navigations.set(request, resultingClientId);
  }

  /**
   * A navigation's answer: did the own origin give it (an observed one always comes from
   * there)? Returns the batched write of the change, for `event.waitUntil`.
   */
  pageAnswered(request: Request, byOwnOrigin: boolean): Promise<void> | undefined {
    const page = this.navigations.get(request);
    return page === undefined ? undefined : this.setPage(page, byOwnOrigin);
  }

  /** Batched with the other stores' writes, never on a request's path (a failed write is tried again at the next change). */
  private setPage(page: string, provedAlive: boolean): Promise<void> | undefined {
    if (this.pages.get(page) === provedAlive) return undefined;
    this.pages.set(page, provedAlive);
    return this.persisted?.changed();
  }

  /**
   * The page script's report ('webpp:timing'): its Resource Timing entries, and the URLs of
   * elements that failed to load. A failure keeps the page's requests with the worker; the
   * entries of URLs passed on are samples of the own origin, and a 404/410 among them makes
   * that URL stale, as when the worker gets one itself (server-memory.ts), so that its next
   * request goes through the worker to a replica that holds it. Returns the batched write of
   * a page's change.
   */
  report(pageId: string | undefined, entries: readonly PageTimingEntry[], failedUrls: readonly string[]): Promise<void> | undefined {
    // Any failed element of the own origin (a passed request's network error has no entry to tell it by).
    let failed = failedUrls.length > 0;
    for (const entry of entries) {
      const passed = this.passed.get(entry.name);
      if (passed === undefined || passed.pending === 0) continue;
      passed.pending--;
      const { responseStatus } = entry;
      if (responseStatus === 404 || responseStatus === 410) this.options.staleBindings.note(entry.name, passed.directoryVersion);
      // A request left to the browser that the own origin failed (lost file, server error) fails
      // the page as its element's `error` event would: the entry tells it even when the element
      // failed before the async page script listened (the script reads buffered entries).
      if (responseStatus === 404 || responseStatus === 410 || responseStatus >= 500) failed = true;
      this.sample(entry);
    }
    return pageId !== undefined && failed ? this.setPage(pageId, false) : undefined;
  }

  private sample(entry: PageTimingEntry): void {
    const { engine, reporter, sizes } = this.options;
    // Its size, so that a large body goes through the worker (and its resume) next time.
    sizes.learnBytes(entry.name, entry.encodedBodySize);
    // An HTTP-cache hit (no bytes on the wire, a body) is no sample (ttfb-sampler.ts).
    if (entry.transferSize === 0 && entry.decodedBodySize > 0) return;
    const nowMs = this.now();
    if (entry.responseStatus >= 500) {
      engine.observe({ server: this.ownServer, purpose: 'request', outcome: 'server-error', nowMs, status: entry.responseStatus });
      return;
    }
    if (!(entry.requestStart > 0 && entry.responseStart >= entry.requestStart)) return;
    const ttfbMs = entry.responseStart - entry.requestStart;
    const body = entry.encodedBodySize > 0 && entry.responseEnd >= entry.responseStart ? { bodyBytes: entry.encodedBodySize, bodyMs: entry.responseEnd - entry.responseStart } : {};
    engine.observe({ server: this.ownServer, purpose: 'request', outcome: 'served', nowMs, ttfbMs, ...body });
    reporter.count('directSamples');
  }
}

/** handlerDidRespond: which replica answered each navigation (the page's proof of life). */
export function directPlugin(direct: DirectRoute, selfOrigin: string): WorkerPlugin {
  const ownServer = serverOf(`${selfOrigin}/`);
  return {
    handlerDidRespond(bound, result) {
      if (bound.request.mode !== 'navigate') return;
      const written = direct.pageAnswered(bound.request, result.kind === 'served' && result.winner.server === ownServer);
      if (written) bound.io.waitUntil(written);
    },
  };
}

const TIMING_FIELDS = ['requestStart', 'responseStart', 'responseEnd', 'transferSize', 'encodedBodySize', 'decodedBodySize', 'responseStatus'] as const;

/** Parses the page script's 'webpp:timing' message; malformed parts are dropped, and a bad number is 0. */
export function parsePageTiming(data: unknown): { entries: PageTimingEntry[]; failedUrls: string[] } {
  const { entries, failed } = data as { entries?: unknown; failed?: unknown };
  const list = (value: unknown): unknown[] => (Array.isArray(value) ? value.slice(0, 1_000) : []);
  return {
    entries: list(entries)
      .filter((raw): raw is unknown[] => Array.isArray(raw) && typeof raw[0] === 'string')
      .map((raw) => {
        const entry = { name: raw[0] } as Record<string, unknown>;
        TIMING_FIELDS.forEach((field, index) => {
          const value = raw[index + 1];
          entry[field] = typeof value === 'number' && value >= 0 && value < Infinity ? value : 0;
        });
        return entry as unknown as PageTimingEntry;
      }),
    failedUrls: list(failed).filter((url): url is string => typeof url === 'string'),
  };
}
