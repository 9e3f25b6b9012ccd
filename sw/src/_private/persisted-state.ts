/**
 * One piece of the worker's state kept in IndexedDB (storage.ts) under one key, the shape
 * the three stores share (policy-store.ts, bindings-store.ts, digest-store.ts): held in
 * memory for the hot path, restored at start (the client reads every key in one
 * transaction, storage.ts readAll, and hands each store its value), and written in batches, at most once per `flushDelayMs` and never on a
 * request's path. A write happens only after a change, and a failed write is tried again at
 * the next one: the in-memory state stays authoritative.
 */
import { DebouncedTask } from './debounced-task.js';
import type { KeyValueStore } from '../storage.js';

export interface PersistedStateOptions {
  storage: KeyValueStore;
  key: string;
  flushDelayMs: number;
  /**
   * The value to write. With `merge`, it is called with the stored value inside one
   * read-modify-write transaction (the policy's state, shared by every tab of the site).
   */
  snapshot(stored?: unknown): unknown;
  merge?: boolean;
  /** Called after every successful write. */
  onFlushed?(): void;
}

export class PersistedState {
  private readonly writer: DebouncedTask;
  private dirty = false;

  constructor(private readonly options: PersistedStateOptions) {
    this.writer = new DebouncedTask(options.flushDelayMs, () => this.write());
  }

  /** Notes a change. Returns the promise of the batched write, for `event.waitUntil`; changes within flushDelayMs share one write. */
  changed(): Promise<void> {
    this.dirty = true;
    return this.writer.schedule();
  }

  /** Writes pending changes now. Never rejects. */
  flushNow(): Promise<void> {
    return this.writer.runNow();
  }

  private async write(): Promise<void> {
    if (!this.dirty) return;
    this.dirty = false;
    const { storage, key } = this.options;
    try {
      if (this.options.merge) await storage.update(key, (stored) => this.options.snapshot(stored));
      else await storage.set(key, this.options.snapshot());
      this.options.onFlushed?.();
    } catch (error) {
      this.dirty = true;
      throw error;
    }
  }
}
