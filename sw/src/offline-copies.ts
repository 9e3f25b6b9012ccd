/**
 * Offline copies as the rest of the worker sees them (the whole feature: offline-cache.ts).
 * They are opt-in (`features=offline`, the webpp-sw-offline.js add-on; addons.ts): without
 * them the worker keeps nothing and rescues nothing (NO_OFFLINE_COPIES).
 */
import type { LogicalCache } from './batch/logical-cache.js';
import type { CacheLike } from './batch/logical-cache.js';
import type { WorkerOptions } from './config.js';
import type { WorkerPlugin } from './plugins.js';
import type { StateReporter } from './state-reporter.js';
import type { KeyValueStore } from './storage.js';

/** On a response served from a saved copy: the HTTP date it was saved. */
export const OFFLINE_COPY_HEADER = 'webpp-offline-copy';

export interface OfflineStats {
  entries: number;
  bytes: number;
  saved: number;
  servedFromCache: number;
  /** When a saved copy last answered a request; null: never. */
  lastAtMs: number | null;
}

export interface OfflineCopies {
  readonly enabled: boolean;
  /** Called with the answer the page gets for `logicalUrl`; returns it unchanged, and may keep a copy. */
  keep(request: Request, logicalUrl: string, response: Response, waitUntil: (promise: Promise<unknown>) => void): Response;
  /** Another logical-URL cache whose entries may serve as offline copies (the batch layer's). */
  alsoFrom(cache: LogicalCache): void;
  /** A saved copy for a request the network failed, if there is one. */
  rescue(request: Request, logicalUrl: string): Promise<Response | undefined>;
  flush(): Promise<void>;
  snapshot(): OfflineStats;
  /** Rescue and keep on the request path (offline-cache.ts offlinePlugin); none without the add-on. */
  readonly plugin?: WorkerPlugin;
}

/** What builds the offline copies of a ReplicaClient. */
interface OfflineCopiesDeps {
  options: WorkerOptions;
  storage: KeyValueStore;
  selfOrigin: string;
  reporter: StateReporter;
  openCache?: () => Promise<CacheLike>;
}

export type OfflineCopiesFactory = (deps: OfflineCopiesDeps) => OfflineCopies;

/** The worker without offline copies. */
export const NO_OFFLINE_COPIES: OfflineCopies = Object.freeze({
  enabled: false,
  keep: (_request: Request, _logicalUrl: string, response: Response) => response,
  alsoFrom: () => undefined,
  rescue: () => Promise.resolve(undefined),
  flush: () => Promise.resolve(),
  snapshot: () => ({ entries: 0, bytes: 0, saved: 0, servedFromCache: 0, lastAtMs: null }),
});
