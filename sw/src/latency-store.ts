/**
 * The latency table shared by every tab of the site (paper Section 4.1: "the latency table
 * is shared by multiple clients"). The worker keeps it in memory and writes it to
 * IndexedDB in batches, never on a request's hot path. Each write is a read-merge-write in
 * one transaction (core's `mergeFrom`, row by row, newer `updatedAtMs` wins), so two worker
 * versions writing at once may lose a sample but never corrupt the table; the paper's
 * "rudimentary concurrency control" likewise "does not prevent lost updates".
 */
import { LatencyTable } from '@webpp/core';
import type { Clock, SelectionConfig } from '@webpp/core';
import { DebouncedTask } from './_private/debounced-task.js';
import { LATENCY_TABLE_KEY } from './storage.js';
import type { KeyValueStore } from './storage.js';

export interface LatencyStoreOptions {
  config: SelectionConfig;
  storage: KeyValueStore;
  flushDelayMs: number;
  clock?: Clock;
  /** Called after every successful write to IndexedDB. */
  onFlushed?: () => void;
}

export class LatencyStore {
  /** The in-memory table; selection reads it synchronously. */
  table: LatencyTable;
  private readonly storage: KeyValueStore;
  private readonly config: SelectionConfig;
  private readonly clock: Clock;
  private readonly writer: DebouncedTask;
  private readonly onFlushed: (() => void) | undefined;
  private dirty = false;

  constructor(options: LatencyStoreOptions) {
    this.config = options.config;
    this.storage = options.storage;
    this.clock = options.clock ?? Date.now;
    this.table = new LatencyTable(options.config, this.clock);
    this.onFlushed = options.onFlushed;
    this.writer = new DebouncedTask(options.flushDelayMs, () => this.flush());
  }

  /** Loads the stored table and merges it into memory (rows learned meanwhile are kept if newer). */
  async load(): Promise<void> {
    const stored = await this.storage.get(LATENCY_TABLE_KEY);
    this.table.mergeFrom(stored);
  }

  /**
   * Notes that the table changed. Returns the promise of the batched write, for
   * `event.waitUntil`; many changes within flushDelayMs share one write.
   */
  changed(): Promise<void> {
    this.dirty = true;
    return this.writer.schedule();
  }

  /** Writes now: read the stored table, merge it into ours, write the union back, atomically. */
  async flush(): Promise<void> {
    if (!this.dirty) return;
    this.dirty = false;
    try {
      await this.storage.update(LATENCY_TABLE_KEY, (stored) => {
        this.table.mergeFrom(stored);
        return this.table.toJSON();
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

  get selectionConfig(): SelectionConfig {
    return this.config;
  }

  now(): number {
    return this.clock();
  }
}
