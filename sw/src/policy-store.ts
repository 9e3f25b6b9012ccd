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
import { PersistedState } from './_private/persisted-state.js';
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
  private readonly persisted: PersistedState;

  constructor(options: PolicyStoreOptions) {
    const policy = options.policy;
    this.policy = policy;
    // A read-merge-write: the stored state is restored into the policy first, then the union is written back.
    this.persisted = new PersistedState({
      storage: options.storage,
      key: LATENCY_TABLE_KEY,
      flushDelayMs: options.flushDelayMs,
      merge: true,
      snapshot: (stored) => {
        policy.restore(stored);
        return policy.snapshot();
      },
      ...(options.onFlushed ? { onFlushed: options.onFlushed } : {}),
    });
  }

  /** Restores what was stored under LATENCY_TABLE_KEY, read by the caller (ReplicaClient reads all its state at once); what the policy learned meanwhile is kept where newer. */
  restore(stored: unknown): void {
    this.policy.restore(stored);
  }

  /**
   * Notes that the policy's state changed. Returns the promise of the batched write, for
   * `event.waitUntil`; many changes within flushDelayMs share one write.
   */
  changed(): Promise<void> {
    return this.persisted.changed();
  }

  /** Forces any pending batched write to happen now. */
  flushNow(): Promise<void> {
    return this.persisted.flushNow();
  }
}
