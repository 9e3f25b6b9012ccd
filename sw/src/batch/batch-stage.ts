/**
 * Batch transmission and the logical-URL cache as a stage of the worker's pipeline (issue 11:
 * a stage, not a wrapper that reaches back into the client). It runs first for every fetch
 * event: page loads ask for batches and embedded resources come from them. Whatever it does
 * not claim, and every fallback, goes on through `respond` — the client's own bind/observe
 * stages — which installBatching hands it from the client (ReplicaClient.useFrontStage).
 *
 * Pages can read its state with a MessageChannel: postMessage({ type: 'webpp:batch-state' }).
 */
import type { RespondIO } from '../plugins.js';
import type { BindingsStore } from '../bindings-store.js';
import type { OfflineCopies } from '../offline-copies.js';
import { BatchClient, type BatchClientOptions } from './batch-client.js';

export const BATCH_STATE_REQUEST = 'webpp:batch-state';

/** What the stage needs from the rest of the pipeline, given once. */
export interface BatchStageDeps {
  /** Offline copies: pages from batches are kept, and batch parts serve when every replica fails. */
  offline: OfflineCopies;
  /** The validator of the exact binding of a URL, if any (what the batch's digest names). */
  validatorOf(url: string): string | undefined;
  /** False once the site switched the worker off: the stage steps aside. */
  isEnabled(): boolean;
  /** True when the worker answers this request at all (route() did not pass it). */
  routes(request: Request): boolean;
  /** The next stages: replica selection for a logical request. */
  respond(logical: Request, io: RespondIO): Promise<Response>;
}

export interface InstalledBatching {
  readonly batch: BatchClient;
  /** Answers the event (respondWith) and returns true when batching handles it. Never throws. */
  handleFetch(event: FetchEvent): boolean;
}

export class BatchStage implements InstalledBatching {
  readonly batch: BatchClient;

  constructor(
    scope: Pick<ServiceWorkerGlobalScope, 'addEventListener'>,
    private readonly deps: BatchStageDeps,
    options: BatchClientOptions = {},
  ) {
    this.batch = new BatchClient({
      // A page taken from a batch is kept for offline use like any other (offline-cache.ts).
      pageWillRespond: (request, page, waitUntil) => deps.offline.keep(request, request.url, page, waitUntil),
      ...options,
    });
    // Parts of batches (kept by the batch layer's own cache) also serve when every replica fails.
    deps.offline.alsoFrom(this.batch.cache);
    scope.addEventListener('message', (event: ExtendableMessageEvent) => {
      const data: unknown = event.data;
      const port = event.ports[0];
      if (port && typeof data === 'object' && data !== null && (data as { type?: unknown }).type === BATCH_STATE_REQUEST) {
        event.waitUntil(this.batch.cache.ready.then(() => port.postMessage(this.batch.snapshot())));
      }
    });
  }

  handleFetch(event: FetchEvent): boolean {
    const { deps } = this;
    try {
      const request = event.request;
      // Switched off by the site: the worker steps aside entirely.
      if (!deps.isEnabled()) return false;
      const claim = this.batch.claim(request);
      if (claim === undefined) return false;
      if (claim === 'navigate' && !deps.routes(request)) return false;
      const waitUntil = (promise: Promise<unknown>): void => event.waitUntil(promise);
      const respond = (logical: Request, decorate?: (physical: Request) => Request): Promise<Response> =>
        deps.respond(logical, { fetch: (physical) => fetch(decorate ? decorate(physical) : physical), waitUntil });
      return this.batch.handleFetch(event, respond, (url) => deps.validatorOf(url));
    } catch {
      return false; // fail open: the normal handling takes the request
    }
  }
}

/** The parts of a ReplicaClient the batch stage stands in front of. */
export interface BatchableClient {
  readonly offline: OfflineCopies;
  readonly bindings: Pick<BindingsStore, 'resolve'>;
  readonly isEnabled: boolean;
  route(request: Request): string;
  respond(logical: Request, io: RespondIO): Promise<Response>;
  useFrontStage(stage: InstalledBatching): void;
}

/**
 * Puts batch transmission and the logical-URL cache in front of a client's bind and observe
 * stages (docs/batching.md). The bundled worker does this when the site turns batching on
 * (`features=batch`, the webpp-sw-batch.js add-on); a Workbox worker calls it itself.
 */
export function installBatching(scope: Pick<ServiceWorkerGlobalScope, 'addEventListener'>, client: BatchableClient, options: BatchClientOptions = {}): InstalledBatching {
  const stage = new BatchStage(
    scope,
    {
      offline: client.offline,
      validatorOf: (url) => {
        const resolved = client.bindings.resolve(url);
        return resolved !== undefined && !resolved.binding.prefix ? resolved.binding.validator : undefined;
      },
      isEnabled: () => client.isEnabled,
      routes: (request) => client.route(request) !== 'pass',
      respond: (logical, io) => client.respond(logical, io),
    },
    options,
  );
  client.useFrontStage(stage);
  return stage;
}
