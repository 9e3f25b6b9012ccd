/**
 * The policy's state shared by every tab of the site (paper Section 4.1: "the latency table
 * is shared by multiple clients"). The policy keeps it in memory; this store writes it to
 * IndexedDB in batches, never on a request's hot path. Each write is a read-merge-write in
 * one transaction: the stored state is restored into the policy first (for the paper's
 * table: row by row, the newer `updatedAtMs` wins), then the union is written back. Two
 * worker versions writing at once may lose a sample but never corrupt the state; the
 * paper's "rudimentary concurrency control" likewise "does not prevent lost updates".
 */
import type { ClientPolicy } from '@webpp/core';
import { DebouncedTask } from './_private/debounced-task.js';
import { LATENCY_TABLE_KEY } from './storage.js';
import type { KeyValueStore } from './storage.js';

export interface PolicyStoreOptions {
  policy: ClientPolicy;
  storage: KeyValueStore;
  flushDelayMs: number;
  /** Called after every successful write to IndexedDB. */
  onFlushed?: () => void;
}

export class PolicyStore {
  readonly policy: ClientPolicy;
  private readonly storage: KeyValueStore;
  private readonly writer: DebouncedTask;
  private readonly onFlushed: (() => void) | undefined;
  private dirty = false;

  constructor(options: PolicyStoreOptions) {
    this.policy = options.policy;
    this.storage = options.storage;
    this.onFlushed = options.onFlushed;
    this.writer = new DebouncedTask(options.flushDelayMs, () => this.flush());
  }

  /** Loads the stored state into the policy (what it learned meanwhile is kept where newer). */
  async load(): Promise<void> {
    this.restore(await this.storage.get(LATENCY_TABLE_KEY));
  }

  /** Restores what was stored under LATENCY_TABLE_KEY, read by the caller (ReplicaClient reads all its state at once). */
  restore(stored: unknown): void {
    this.policy.restore(stored);
  }

  /**
   * Notes that the policy's state changed. Returns the promise of the batched write, for
   * `event.waitUntil`; many changes within flushDelayMs share one write.
   */
  changed(): Promise<void> {
    this.dirty = true;
    return this.writer.schedule();
  }

  /** Writes now: read the stored state, merge it into the policy's, write the union back, atomically. */
  async flush(): Promise<void> {
    if (!this.dirty) return;
    this.dirty = false;
    try {
      await this.storage.update(LATENCY_TABLE_KEY, (stored) => {
        this.policy.restore(stored);
        return this.policy.snapshot();
      });
      this.onFlushed?.();
    } catch (error) {
      this.dirty = true;
      throw error;
    }
  }

  /** Forces any pending batched write to happen now. */
  async flushNow(): Promise<void> {
    await this.writer.runNow();
  }
}
