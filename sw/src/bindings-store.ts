/**
 * What the worker knows about bindings (paper Section 3.2: the server piggybacks the
 * physical URLs on its responses). Learned from the bindings header of every response the
 * worker handles, applied in memory at once (so a page's bindings serve its own
 * subresources), and written to IndexedDB in batches so they survive worker restarts.
 */
import { BINDINGS_HEADER, BindingsIndex, decodeBindingsNative } from '@webpp/core';
import type { Binding, BindingsDocument, BindingsError, DecodeResult, ResolvedBinding } from '@webpp/core';
import { PersistedState } from './_private/persisted-state.js';
import { BINDINGS_KEY } from './storage.js';
import type { KeyValueStore } from './storage.js';

export type LearnResult =
  | { kind: 'none' }
  /** `repeated`: the very same header value was applied recently; nothing to do. */
  | { kind: 'applied'; applied: number; ignored: number; repeated?: boolean; document?: BindingsDocument }
  | { kind: 'rejected'; error: BindingsError };

export interface BindingsStoreOptions {
  storage: KeyValueStore;
  flushDelayMs: number;
}

/** Header values remembered as already applied (each resource repeats its own on every load). */
const RECENT_HEADER_VALUES = 512;

export class BindingsStore {
  private index = new BindingsIndex();
  /** Recently applied header values, oldest first: the same bytes mean the same bindings. */
  private readonly recentValues = new Set<string>();
  private readonly persisted: PersistedState;
  /** Compressed header values being inflated, by key: the same value arriving twice is inflated once. */
  private readonly inflating = new Map<string, Promise<LearnResult>>();

  constructor(options: BindingsStoreOptions) {
    this.persisted = new PersistedState({ storage: options.storage, key: BINDINGS_KEY, flushDelayMs: options.flushDelayMs, snapshot: () => this.index.toJSON() });
  }

  /** Restores what was stored under BINDINGS_KEY (read by the caller), then re-applies what was learned meanwhile. */
  restore(value: unknown): void {
    const stored = BindingsIndex.fromJSON(value);
    const learnedMeanwhile = this.index.toJSON();
    for (const entry of learnedMeanwhile.entries) {
      stored.apply({ directoryVersion: entry.directoryVersion, bindings: [entry.binding] });
    }
    this.index = stored;
    this.recentValues.clear();
  }

  /** Where a logical URL's replicas are, or undefined. Synchronous: used on the hot path. */
  resolve(logicalUrl: string): ResolvedBinding | undefined {
    return this.index.resolve(logicalUrl);
  }

  get size(): number {
    return this.index.size;
  }

  get directoryVersion(): number {
    return this.index.directoryVersion;
  }

  /** Every binding held (to seed the trust rule's servers after a restart). */
  held(): Binding[] {
    return this.index.toJSON().entries.map((entry) => entry.binding);
  }

  /**
   * Reads the bindings header of a response. Synchronous for an uncompressed header, so that
   * bindings that arrive with a page apply before the page's subresources are requested; a
   * compressed one is inflated by the platform (DecompressionStream) and the result comes as a
   * promise, while `learning` is true (the router holds requests until then: route.ts). Never
   * throws: a malformed header is reported and otherwise ignored. `screen`, for a header from
   * a replica, keeps only what the trust rule (trust.ts) allows; `document` in the result is
   * what was applied.
   */
  learn(headers: Headers, screen?: (document: BindingsDocument) => BindingsDocument): LearnResult | Promise<LearnResult> {
    const value = headers.get(BINDINGS_HEADER);
    if (value === null) return { kind: 'none' };
    // The same bytes from the own origin and from a replica do not mean the same bindings.
    const key = screen === undefined ? value : `screened:${value}`;
    if (this.recentValues.has(key)) return { kind: 'applied', applied: 0, ignored: 0, repeated: true };
    const pending = this.inflating.get(key);
    if (pending !== undefined) return pending.then((): LearnResult => ({ kind: 'applied', applied: 0, ignored: 0, repeated: true }));
    const decoded = decodeBindingsNative(value);
    if (!(decoded instanceof Promise)) return this.apply(key, decoded, screen);
    const learned = decoded.then((result) => this.apply(key, result, screen)).finally(() => this.inflating.delete(key));
    this.inflating.set(key, learned);
    return learned;
  }

  /** True while a compressed header is being inflated: its bindings are not applied yet. */
  get learning(): boolean {
    return this.inflating.size > 0;
  }

  /** Resolves when no header is being inflated. */
  async settled(): Promise<void> {
    while (this.inflating.size > 0) await Promise.all(this.inflating.values());
  }

  private apply(key: string, decoded: DecodeResult, screen?: (document: BindingsDocument) => BindingsDocument): LearnResult {
    if (!decoded.ok) return { kind: 'rejected', error: decoded.error };
    const document = screen === undefined ? decoded.document : screen(decoded.document);
    const { applied, ignored } = this.index.apply(document);
    this.recentValues.add(key);
    if (this.recentValues.size > RECENT_HEADER_VALUES) this.recentValues.delete(this.recentValues.values().next().value as string);
    return { kind: 'applied', applied, ignored, document };
  }

  /** Returns the promise of the batched write, for `event.waitUntil`. */
  changed(): Promise<void> {
    return this.persisted.changed();
  }

  flushNow(): Promise<void> {
    return this.persisted.flushNow();
  }
}
