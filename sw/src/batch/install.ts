/**
 * Puts batch transmission and the logical-URL cache in front of a ReplicaClient: page loads
 * ask for batches and embedded resources come from them, everything else, and every
 * fallback, goes through the ReplicaClient's normal replica selection. One call in the
 * worker script:
 *
 *   const batching = installBatching(self, client);
 *   self.addEventListener('fetch', (event) => {
 *     if (batching.handleFetch(event)) return;
 *     // ... the normal handling
 *   });
 *
 * Pages can read its state with a MessageChannel: postMessage({ type: 'webpp:batch-state' }).
 */
import type { ReplicaClient, RespondIO } from '../replica-client.js';
import { BatchClient, type BatchClientOptions } from './batch-client.js';

export const BATCH_STATE_REQUEST = 'webpp:batch-state';

export interface InstalledBatching {
  readonly batch: BatchClient;
  /** Answers the event (respondWith) and returns true when batching handles it. Never throws. */
  handleFetch(event: FetchEvent): boolean;
}

export function installBatching(
  scope: Pick<ServiceWorkerGlobalScope, 'addEventListener'>,
  replicas: ReplicaClient,
  options: BatchClientOptions = {},
): InstalledBatching {
  const batch = new BatchClient({
    // A page taken from a batch is kept for offline use like any other (offline-cache.ts).
    pageWillRespond: (request, page, waitUntil) => replicas.offline.keep(request, request.url, page, waitUntil),
    ...options,
  });
  // Parts of batches (kept by the batch layer's own cache) also serve when every replica fails.
  replicas.offline.alsoFrom(batch.cache);
  scope.addEventListener('message', (event: ExtendableMessageEvent) => {
    const data: unknown = event.data;
    const port = event.ports[0];
    if (port && typeof data === 'object' && data !== null && (data as { type?: unknown }).type === BATCH_STATE_REQUEST) {
      event.waitUntil(batch.cache.ready.then(() => port.postMessage(batch.snapshot())));
    }
  });
  const boundValidator = (url: string): string | undefined => {
    const resolved = replicas.bindings.resolve(url);
    return resolved !== undefined && !resolved.binding.prefix ? resolved.binding.validator : undefined;
  };
  return {
    batch,
    handleFetch(event) {
      try {
        const request = event.request;
        // Switched off by the site: the worker steps aside entirely.
        if (!replicas.isEnabled) return false;
        const claim = batch.claim(request);
        if (claim === undefined) return false;
        if (claim === 'navigate' && replicas.route(request) === 'pass') return false;
        const waitUntil = (promise: Promise<unknown>): void => event.waitUntil(promise);
        const respond = (logical: Request, decorate?: (physical: Request) => Request): Promise<Response> => {
          const io: RespondIO = { fetch: (physical) => fetch(decorate ? decorate(physical) : physical), waitUntil };
          return replicas.respond(logical, io);
        };
        return batch.handleFetch(event, respond, boundValidator);
      } catch {
        return false; // fail open: the normal handling takes the request
      }
    },
  };
}
