/**
 * Replica binding for a site that already has a Workbox service worker: a Workbox
 * `Strategy` and a `workbox-routing` match callback, sharing the bundled worker's
 * implementation (ReplicaClient).
 *
 *   import { registerRoute } from 'workbox-routing';
 *   import { ReplicaStrategy, replicaRouteMatcher } from '@webpp/sw';
 *   const replicas = new ReplicaStrategy({ webpp: { timeoutCeilingMs: 8000 }, plugins: [myPlugin] });
 *   registerRoute(replicaRouteMatcher, replicas, 'GET');
 *   registerRoute(replicaRouteMatcher, replicas, 'HEAD');
 *
 * Every attempt goes through `handler.fetch`, so plugins see each request to a replica
 * (`requestWillFetch`, `fetchDidSucceed`, `fetchDidFail`) and the strategy's own callbacks
 * (`handlerWillStart`, `handlerWillRespond`, `handlerDidRespond`, …) run as usual.
 *
 * `new ReplicaStrategy({ leaveToBrowser: true })` turns on the bundled worker's exit where it
 * cannot help (direct.ts): the route matcher then returns false for a bound same-origin
 * subresource whose plan would go to the own origin first, alone, on a page whose navigation
 * the own origin answered, so Workbox's router leaves it to the site's later routes or to
 * the browser; and navigations prefer the own origin where the policy predicts no gain
 * elsewhere (the page's proof of life).
 */
import { createPolicy } from '@webpp/core';
import { createClientAggregate } from './client-aggregate.js';
import { createIntegrity } from './integrity-guard.js';
import { Strategy } from 'workbox-strategies';
import type { StrategyHandler, StrategyOptions } from 'workbox-strategies';
import type { RouteMatchCallback, WorkboxPlugin } from 'workbox-core/types.js';
import type { WorkerOptionsInput } from './config.js';
import { createOfflineCopies } from './offline-cache.js';
import { isSameOrigin } from './physical-request.js';
import { ReplicaClient } from './replica-client.js';
import type { ReplicaClientOptions } from './replica-client.js';
import { withTableViews } from './table-views.js';

let sharedClient: ReplicaClient | undefined;
/** Clients whose strategy was asked to leave to the browser what it cannot improve (`leaveToBrowser`). */
const leanClients = new WeakSet<ReplicaClient>();

/**
 * The worker-wide ReplicaClient used by ReplicaStrategy and replicaRouteMatcher. Created on
 * first use with `settings`; later settings are ignored (one latency table per worker).
 * In a Workbox worker, `webpp-control: off` stops binding but does not unregister the
 * site's own worker unless `unregisterOnSwitchOff` is true.
 */
export function getReplicaClient(settings?: WorkerOptionsInput, extra: ReplicaClientWorkboxOptions = {}): ReplicaClient {
  if (!sharedClient) {
    const { unregisterOnSwitchOff = false, leaveToBrowser = false, ...rest } = extra;
    sharedClient = new ReplicaClient({
      // A site bundles its own worker: every policy of core's registry is there, the table policies with their rows.
      policies: withTableViews(createPolicy),
      // Offline copies keep every bound answer, so they are off where requests are left to the browser.
      ...(leaveToBrowser ? {} : { offlineCopies: createOfflineCopies }),
      integrity: createIntegrity,
      clientAggregate: createClientAggregate,
      ...(settings ? { settings } : {}),
      ...(unregisterOnSwitchOff ? {} : { unregister: () => Promise.resolve() }),
      ...rest,
    });
    if (leaveToBrowser) leanClients.add(sharedClient);
  }
  return sharedClient;
}

export interface ReplicaClientWorkboxOptions extends Omit<ReplicaClientOptions, 'parsed' | 'settings'> {
  /** Unregister the whole service worker on `webpp-control: off`. Default false in Workbox workers. */
  unregisterOnSwitchOff?: boolean;
  /** ReplicaStrategyOptions.leaveToBrowser, for the worker-wide client (offline copies are then off). */
  leaveToBrowser?: boolean;
}

export interface ReplicaStrategyOptions extends Omit<StrategyOptions, 'cacheName' | 'matchOptions'> {
  /** The worker's public options, as on the script tag (options-schema.ts): `{ policy: 'fast', timeoutCeilingMs: 8000 }`. */
  webpp?: WorkerOptionsInput;
  /** Use this client instead of the worker-wide one. */
  client?: ReplicaClient;
  /** Options for the worker-wide client when this strategy creates it. */
  clientOptions?: ReplicaClientWorkboxOptions;
  /**
   * Leave to the browser (the route matcher does not match) the bound same-origin
   * subresources the worker cannot improve, as the bundled worker does (docs/service-worker.md,
   * "Left to the browser where the worker cannot help"). Those requests get no failover, and
   * the worker-wide client keeps no offline copies (they need every answer). Default false.
   */
  leaveToBrowser?: boolean;
}

export class ReplicaStrategy extends Strategy {
  readonly client: ReplicaClient;

  constructor(options: ReplicaStrategyOptions = {}) {
    const { webpp, client, clientOptions, leaveToBrowser = false, ...strategyOptions } = options;
    super(strategyOptions);
    this.client = client ?? getReplicaClient(webpp, { ...clientOptions, ...(leaveToBrowser ? { leaveToBrowser } : {}) });
    if (leaveToBrowser) leanClients.add(this.client);
    const scope = globalThis as unknown as Partial<ServiceWorkerGlobalScope>;
    if (typeof scope.addEventListener === 'function' && 'registration' in scope) {
      // Answers the page script's state requests (window.webpp.state()).
      this.client.attachMessageListener(scope as ServiceWorkerGlobalScope);
    }
  }

  protected override _handle(request: Request, handler: StrategyHandler): Promise<Response> {
    // With leaveToBrowser, a navigation names the own origin to the policy as preferred (it
    // goes there where the policy predicts no gain elsewhere), so that its page's requests may go direct.
    const preferred = leanClients.has(this.client) && request.mode === 'navigate' ? new URL(request.url).origin : undefined;
    return this.client.respond(request, {
      fetch: (physicalRequest) => handler.fetch(physicalRequest),
      waitUntil: (promise) => void handler.waitUntil(promise),
      ...(preferred === undefined ? {} : { preferred }),
    });
  }
}

/**
 * Matches what the worker should handle: GET/HEAD requests whose logical URL has bindings,
 * plus same-origin navigations, fetches and stylesheets (to learn their bindings). Register
 * it for 'GET' and for 'HEAD'.
 */
export function createReplicaRouteMatcher(client: ReplicaClient): RouteMatchCallback {
  return ({ request, event }) => {
    // A fetch event tells which page made the request (leaveToBrowser: direct.ts); a request of Workbox's own (cache warming) does not.
    const fetchEvent = event as Partial<FetchEvent> | undefined;
    if (leanClients.has(client) && fetchEvent?.request === request) return client.routeEvent(fetchEvent as FetchEvent) !== 'pass';
    return client.route(request) !== 'pass';
  };
}

/**
 * A plugin for the site's own cache strategies, above all its precache (workbox-precaching's
 * `addPlugins([replicaCacheLearningPlugin])`): the worker reads the bindings header of every
 * own-origin response they answer with. A precached page never reaches the replica strategy,
 * so without it a site whose pages and stylesheets are all precached never learns a binding.
 */
export const replicaCacheLearningPlugin: WorkboxPlugin = {
  cachedResponseWillBeUsed: async ({ request, cachedResponse, event }) => {
    if (cachedResponse) {
      const waitUntil = (promise: Promise<unknown>): void => {
        try {
          (event as ExtendableEvent | undefined)?.waitUntil(promise);
        } catch {
          // The event is over: the write happens anyway, unguarded.
        }
      };
      learnFromCache(getReplicaClient(), request.url, cachedResponse, waitUntil);
    }
    return cachedResponse;
  },
};

/** createReplicaRouteMatcher for the worker-wide client. */
let sharedMatcher: RouteMatchCallback | undefined;
export const replicaRouteMatcher: RouteMatchCallback = (options) => {
  sharedMatcher ??= createReplicaRouteMatcher(getReplicaClient());
  return sharedMatcher(options) as boolean;
};

/**
 * Reads the bindings of an own-origin response that the site's own cache answered with (a
 * Workbox precache: replicaCacheLearningPlugin), which the worker never fetched itself.
 * Responses for other origins are ignored (trust rule). Here, not in ReplicaClient: only a
 * Workbox worker has such responses, and the bundled worker does not carry it.
 */
function learnFromCache(client: ReplicaClient, requestUrl: string, response: Response, waitUntil: (promise: Promise<unknown>) => void): void {
  if (!isSameOrigin(requestUrl, client.parts.selfOrigin)) return;
  try {
    client.parts.headers.learnCachedBindings(response, requestUrl, waitUntil);
  } catch {
    // Learning never affects a page.
  }
}
