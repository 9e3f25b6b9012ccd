/**
 * The first stage: does the worker answer this request at all? Synchronous and cheap,
 * called for every request the page makes: a method check, a prefix test and one bindings
 * lookup; for a bound subresource, whether the own origin is the plan's sole first choice
 * (direct.ts: then the browser fetches it without the worker). webpp's own scripts are never bound, even under a directory wildcard, so a page
 * never depends on a replica for the client itself.
 */
import type { ResolvedBinding } from '@webpp/core';
import type { BindingsStore } from './bindings-store.js';
import { isSameOrigin } from './physical-request.js';
import { BoundedMap } from './_private/bounded-map.js';

/** How the worker handles a request. */
export type Route =
  /** The logical URL has bindings: bind it to a replica. */
  | 'bind'
  /** Same-origin navigation, fetch() or stylesheet without bindings: fetch as is, read its bindings. */
  | 'observe'
  /** The stored state is still loading (worker just started), or bindings are being inflated: decide once they are there. */
  | 'wait'
  /** Not the worker's business: let the browser handle it (no respondWith). */
  | 'pass';

/** Same-origin requests without bindings that are still worth reading bindings from. */
const OBSERVED_DESTINATIONS = new Set(['', 'document', 'iframe', 'style']);

/**
 * How long a same-origin URL whose answer carried no webpp header is passed on instead of
 * observed again: as long as the worker trusts its copy of a static host's bindings file
 * (static-bindings.ts), so a site that starts sending headers is heard within the same time.
 */
const QUIET_FOR_MS = 5 * 60_000;
const QUIET_URLS = 1_000;

export interface RouterOptions {
  selfOrigin: string;
  /** Paths of webpp's own scripts on the page's origin. */
  ownScriptPaths: readonly string[];
  bindings: BindingsStore;
  isOff(): boolean;
  isLoaded(): boolean;
  /** Logical URLs only the own origin answers (personal or redirecting): never bound (own-origin-answers.ts). */
  isOwnOnly?(logicalUrl: string): boolean;
  /** A bound request the browser may fetch itself: the own origin is the plan's sole first choice (direct.ts). */
  goesDirect?(request: Request, resolved: ResolvedBinding, clientId: string | undefined): boolean;
}

export class Router {
  private readonly ownScriptPrefixes: string[];
  private readonly resolvedByRequest = new WeakMap<Request, ResolvedBinding>();
  /** Same-origin URLs (not navigations) observed lately whose answer had nothing to learn: until when they are passed on. */
  private readonly quietUntilMs = new BoundedMap<string, number>(QUIET_URLS);

  constructor(private readonly options: RouterOptions) {
    this.ownScriptPrefixes = options.ownScriptPaths.map((path) => `${options.selfOrigin}${path}`);
  }

  /** `clientId`: the page that made the request (FetchEvent.clientId), when known. */
  route(request: Request, clientId?: string): Route {
    if (this.options.isOff()) return 'pass';
    const { method, url } = request;
    if (method !== 'GET' && method !== 'HEAD') return 'pass';
    if (!url.startsWith('http:') && !url.startsWith('https:')) return 'pass';
    if (this.isOwnScript(url)) return 'pass';
    // Held while the stored state loads, or while a compressed bindings header is inflated (bindings-store.ts).
    if (!this.options.isLoaded() || this.options.bindings.learning) return 'wait';
    const resolved = this.options.bindings.resolve(url);
    if (resolved && !this.options.isOwnOnly?.(resolved.logical)) {
      if (this.options.goesDirect?.(request, resolved, clientId)) return 'pass';
      this.resolvedByRequest.set(request, resolved);
      return 'bind';
    }
    return this.isObservable(request) && !this.isQuiet(request) ? 'observe' : 'pass';
  }

  /**
   * An observed answer without bindings or control header: its URL (unless a navigation) is
   * passed on, untouched by the worker, for the next QUIET_FOR_MS. A page's fetch() of an API
   * then costs nothing; navigations are always observed (the kill switch and static bindings).
   * Not with offline copies (the add-on keeps copies of observed answers).
   */
  noteQuiet(request: Request, nowMs = Date.now()): void {
    if (request.mode !== 'navigate') this.quietUntilMs.set(request.url, nowMs + QUIET_FOR_MS);
  }

  private isQuiet(request: Request): boolean {
    if (request.mode === 'navigate') return false;
    const untilMs = this.quietUntilMs.get(request.url);
    return untilMs !== undefined && untilMs > Date.now();
  }

  /** The binding route() found for this request, else a fresh lookup. */
  resolved(request: Request): ResolvedBinding | undefined {
    const resolved = this.resolvedByRequest.get(request) ?? this.options.bindings.resolve(request.url);
    return resolved && this.options.isOwnOnly?.(resolved.logical) ? undefined : resolved;
  }

  isObservable(request: Request): boolean {
    return isSameOrigin(request.url, this.options.selfOrigin) && (request.mode === 'navigate' || OBSERVED_DESTINATIONS.has(request.destination));
  }

  /** webpp's own scripts, with or without a query. */
  private isOwnScript(url: string): boolean {
    for (const prefix of this.ownScriptPrefixes) {
      if (url.startsWith(prefix) && (url.length === prefix.length || url[prefix.length] === '?')) return true;
    }
    return false;
  }
}
