/** The memory cache as its options describe it (features/memory-cache.ts attaches it to the API). */
import { LocalAccessCounts } from './access-counts.js';
import { MemoryCache } from './memory-cache.js';
import type { PolicyName } from './policies.js';

/** Keys whose access counts are tracked, per KiB of cache (at least 1,000, at most MAX_TRACKED_KEYS). */
const TRACKED_KEYS_PER_KIB = 1;
const MAX_TRACKED_KEYS = 100_000;

export interface LocalCacheOptions {
  memoryCacheBytes: number;
  memoryCacheMaxEntryBytes: number;
  memoryCachePolicy: PolicyName;
  memoryCacheAgingIntervalMs: number;
}

export function createLocalCache(options: LocalCacheOptions): MemoryCache {
  const counts = new LocalAccessCounts({
    agingIntervalMs: options.memoryCacheAgingIntervalMs,
    maxKeys: Math.min(MAX_TRACKED_KEYS, Math.max(1000, Math.floor((options.memoryCacheBytes / 1024) * TRACKED_KEYS_PER_KIB))),
  });
  return new MemoryCache({ maxBytes: options.memoryCacheBytes, maxEntryBytes: options.memoryCacheMaxEntryBytes, policy: options.memoryCachePolicy, counts });
}
