/**
 * Content integrity as the rest of the worker sees it (the whole feature: integrity-guard.ts,
 * integrity.ts, digest-store.ts). It is opt-in (`features=integrity`, the
 * webpp-sw-integrity.js add-on; addons.ts), as the origin's `contentDigests` that feeds it is:
 * without it the worker records no digests and checks nothing (NO_INTEGRITY). A site whose
 * origin sends digests turns the add-on on (the origin's injected script tag does).
 */
import type { ContentDigest, ServerId } from '@webpp/core';
import type { WorkerPlugin } from './plugins.js';
import type { StateReporter } from './state-reporter.js';
import type { KeyValueStore } from './storage.js';

type WaitUntil = (promise: Promise<unknown>) => void;

export interface IntegrityStage {
  readonly enabled: boolean;
  /** The checks on the request path (integrity-guard.ts integrityPlugin); none without the add-on. */
  readonly plugin?: WorkerPlugin;
  /** The own origin's digests from a bindings header (only the own origin's count: trust.ts). */
  learn(digests: readonly ContentDigest[], waitUntil: WaitUntil): void;
  /** Restores the digests stored under DIGESTS_KEY (storage.ts), read by the caller with the rest of the state. */
  restore(stored: unknown): void;
  flush(): Promise<void>;
}

/** What builds the integrity stage of a ReplicaClient. */
export interface IntegrityDeps {
  storage: KeyValueStore;
  selfOrigin: string;
  flushDelayMs: number;
  /** Bodies up to this size are checked before the page sees them. */
  maxBufferBytes?: number;
  reporter: StateReporter;
  /** A replica's bytes did not match, or its body broke off while checked: its server failed. */
  failed(server: ServerId): void;
}

export type IntegrityFactory = (deps: IntegrityDeps) => IntegrityStage;

/** The worker without integrity checks. */
export const NO_INTEGRITY: IntegrityStage = Object.freeze({
  enabled: false,
  learn: () => undefined,
  restore: () => undefined,
  flush: () => Promise.resolve(),
});
