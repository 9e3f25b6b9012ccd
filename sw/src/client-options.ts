/** The options of a ReplicaClient (replica-client.ts): what a worker script or a Workbox site passes. */
import type { ClientAggregateFactory } from './client-aggregate-stage.js';
import type { IntegrityFactory } from './integrity-stage.js';
import type { ClientPolicy, RandomSource } from '@webpp/core';
import type { PolicyResolver } from './addons.js';
import type { OfflineCopiesFactory } from './offline-copies.js';
import type { CacheLike } from './batch/logical-cache.js';
import type { InternalOverrides, ParsedWorkerOptions, WorkerOptionsInput } from './config.js';
import type { PageNotifier } from './kill-switch.js';
import type { WebppEvent } from './messages.js';
import type { KeyValueStore } from './storage.js';

export interface ReplicaClientOptions {
  /** Parsed options (from the worker's URL); or `settings` to resolve them here. */
  parsed?: ParsedWorkerOptions;
  /** The public options (options-schema.ts), as on the script tag. */
  settings?: WorkerOptionsInput;
  /** Internal overrides, for tests and benches (config.ts): core's constants by name, `preset`, `flushDelayMs`… */
  internal?: InternalOverrides;
  /** The page origin the worker serves; default: the worker's own origin. */
  selfOrigin?: string;
  storage?: KeyValueStore;
  /** Overrides the policy named in the options (any @webpp/core ClientPolicy). */
  policy?: ClientPolicy;
  /**
   * Where the policy named in the options comes from. Default: `webpp` only (the bundled
   * worker's, whose other policies are an add-on); pass @webpp/core's `createPolicy` for
   * every policy of core's registry (the Workbox strategy does).
   */
  policies?: PolicyResolver;
  /** Fetch used for refreshes and probes (default: global fetch). */
  fetch?: (request: Request) => Promise<Response>;
  random?: RandomSource;
  /** Publishes live events (default: BroadcastChannel 'webpp' when available). */
  publish?: (events: WebppEvent[]) => void;
  /** Unregisters the worker on `webpp-control: off` (default: self.registration.unregister()). */
  unregister?: () => Promise<unknown>;
  /** Tells every open page of the site that the worker was switched off (default: clients.matchAll + postMessage). */
  notifyPages?: PageNotifier;
  /** Watch the worker's Resource Timing entries to leave HTTP-cache hits out of the samples. Default true. */
  observeResourceTiming?: boolean;
  /**
   * Paths on the page's origin that are never bound: webpp's own scripts. Default: the
   * page script "/webpp.js" and the worker's own path. A directory wildcard that covers
   * them must not make the page depend on a replica for the client itself.
   */
  ownScriptPaths?: string[];
  /** Bodies with a digest up to this size are verified before the page sees them (integrity.ts). Default 1 MiB. */
  verifyBufferBytes?: number;
  /**
   * Builds the offline copies (offline-cache.ts `createOfflineCopies`); without it the client
   * keeps none. The bundled worker passes it when `features` has `offline`; the Workbox
   * strategy always does.
   */
  offlineCopies?: OfflineCopiesFactory;
  /** Where offline copies live (default: Cache Storage 'webpp-offline-v1'; offline-cache.ts). */
  openOfflineCache?: () => Promise<CacheLike>;
  /**
   * Builds the integrity checks (integrity-guard.ts `createIntegrity`); without it the client
   * records no digests and checks nothing. The bundled worker passes it when `features` has
   * `integrity`; the Workbox strategy always does.
   */
  integrity?: IntegrityFactory;
  /**
   * Builds the client aggregate for first visits (client-aggregate.ts `createClientAggregate`);
   * without it the client reads no `webpp-aggregate` header. The bundled worker passes it when
   * `features` has `aggregate`; the Workbox strategy always does.
   */
  clientAggregate?: ClientAggregateFactory;
}
