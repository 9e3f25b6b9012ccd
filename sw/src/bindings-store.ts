/**
 * What the worker knows about bindings (paper Section 3.2: the server piggybacks the
 * physical URLs on its responses). Learned from the bindings header of every response the
 * worker handles, applied in memory at once (so a page's bindings serve its own
 * subresources), and written to IndexedDB in batches so they survive worker restarts.
 */
import { BINDINGS_HEADER, BindingsIndex, decodeBindings } from '@webpp/core';
import type { BindingsError, ResolvedBinding } from '@webpp/core';
import { DebouncedTask } from './_private/debounced-task.js';
import { BINDINGS_KEY } from './storage.js';
import type { KeyValueStore } from './storage.js';

export type LearnResult =
  | { kind: 'none' }
  /** `repeated`: the very same header value was applied recently; nothing to do. */
  | { kind: 'applied'; applied: number; ignored: number; repeated?: boolean }
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
  private readonly storage: KeyValueStore;
  private readonly writer: DebouncedTask;

  constructor(options: BindingsStoreOptions) {
    this.storage = options.storage;
    this.writer = new DebouncedTask(options.flushDelayMs, () => this.flush());
  }

  /** Loads the stored bindings, then re-applies what was learned meanwhile (newer versions win). */
  async load(): Promise<void> {
    const stored = BindingsIndex.fromJSON(await this.storage.get(BINDINGS_KEY));
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

  /**
   * Reads the bindings header of a response. Synchronous, so that bindings that arrive
   * with a page apply before the page's subresources are requested. Never throws: a
   * malformed header is reported and otherwise ignored.
   */
  learn(headers: Headers): LearnResult {
    const value = headers.get(BINDINGS_HEADER);
    if (value === null) return { kind: 'none' };
    if (this.recentValues.has(value)) return { kind: 'applied', applied: 0, ignored: 0, repeated: true };
    const decoded = decodeBindings(value);
    if (!decoded.ok) return { kind: 'rejected', error: decoded.error };
    const { applied, ignored } = this.index.apply(decoded.document);
    this.recentValues.add(value);
    if (this.recentValues.size > RECENT_HEADER_VALUES) this.recentValues.delete(this.recentValues.values().next().value as string);
    return { kind: 'applied', applied, ignored };
  }

  /** Returns the promise of the batched write, for `event.waitUntil`. */
  changed(): Promise<void> {
    return this.writer.schedule();
  }

  async flushNow(): Promise<void> {
    await this.writer.runNow();
  }

  private async flush(): Promise<void> {
    await this.storage.set(BINDINGS_KEY, this.index.toJSON());
  }
}
