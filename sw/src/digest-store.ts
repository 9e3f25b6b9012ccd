/**
 * The content digests the site's own origin gave (docs/protocol.md, "Content digests"):
 * logical URL → "sha256-<base64>". Only the own origin's digests are recorded (trust.ts), so
 * a replica never chooses what its own bytes are checked against. Kept in memory for the hot
 * path, written to IndexedDB in batches (a page served by a replica later still gets its
 * resources checked after a worker restart), bounded in entries (least recently set first out).
 */
import { isSha256Integrity } from '@webpp/core';
import type { ContentDigest } from '@webpp/core';
import { PersistedState } from './_private/persisted-state.js';
import { DIGESTS_KEY } from './storage.js';
import type { KeyValueStore } from './storage.js';

export interface DigestStoreOptions {
  storage: KeyValueStore;
  flushDelayMs: number;
  /** Most digests kept. Default 10 000. */
  maxEntries?: number;
}

interface DigestsJSON {
  formatVersion: 1;
  entries: [string, string][];
}

export class DigestStore {
  private digests = new Map<string, string>();
  private readonly maxEntries: number;
  private readonly persisted: PersistedState;

  constructor(options: DigestStoreOptions) {
    this.maxEntries = options.maxEntries ?? 10_000;
    this.persisted = new PersistedState({ storage: options.storage, key: DIGESTS_KEY, flushDelayMs: options.flushDelayMs, snapshot: () => this.toJSON() });
  }

  /** The digest of a logical URL (canonical, as BindingsIndex.resolve gives it), or undefined. */
  get(logicalUrl: string): string | undefined {
    return this.digests.get(logicalUrl);
  }

  get size(): number {
    return this.digests.size;
  }

  /** Records the own origin's digests (a newer digest of a URL replaces the older). Returns how many changed. */
  record(digests: readonly ContentDigest[]): number {
    let changed = 0;
    for (const { logical, integrity } of digests) {
      if (this.digests.get(logical) === integrity) continue;
      this.digests.delete(logical);
      this.digests.set(logical, integrity);
      changed++;
    }
    while (this.digests.size > this.maxEntries) this.digests.delete(this.digests.keys().next().value as string);
    return changed;
  }

  /** Restores what was stored under DIGESTS_KEY (read by the caller); those recorded meanwhile win. */
  restore(value: unknown): void {
    const stored = value as Partial<DigestsJSON> | undefined;
    const loaded = new Map<string, string>();
    if (stored?.formatVersion === 1 && Array.isArray(stored.entries)) {
      for (const entry of stored.entries) {
        if (Array.isArray(entry) && typeof entry[0] === 'string' && isSha256Integrity(entry[1])) loaded.set(entry[0], entry[1]);
      }
    }
    for (const [logical, integrity] of this.digests) {
      loaded.delete(logical);
      loaded.set(logical, integrity);
    }
    this.digests = loaded;
    while (this.digests.size > this.maxEntries) this.digests.delete(this.digests.keys().next().value as string);
  }

  /** Returns the promise of the batched write, for `event.waitUntil`. */
  changed(): Promise<void> {
    return this.persisted.changed();
  }

  flushNow(): Promise<void> {
    return this.persisted.flushNow();
  }

  private toJSON(): DigestsJSON {
    return { formatVersion: 1, entries: [...this.digests] };
  }
}
