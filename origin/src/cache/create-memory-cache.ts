/** The memory cache as the options describe it (off when memoryCacheBytes is 0). */
import type { ResolvedOptions } from '../options.js';
import { reservedPathReason } from '../reserved-paths.js';
import { LocalAccessCounts } from './access-counts.js';
import { MemoryCacheApi } from './cache-api.js';
import { MemoryCache } from './memory-cache.js';

/** Keys whose access counts are tracked, per KiB of cache (at least 1,000, at most MAX_TRACKED_KEYS). */
const TRACKED_KEYS_PER_KIB = 1;
const MAX_TRACKED_KEYS = 100_000;

type CacheOptions = Pick<ResolvedOptions, 'memoryCacheBytes' | 'memoryCacheMaxEntryBytes' | 'memoryCachePolicy' | 'memoryCacheAgingIntervalMs' | 'scriptPath' | 'workerPath'>;

export function createMemoryCache(options: CacheOptions): MemoryCacheApi {
  const reserved = (path: string): string | undefined => reservedPathReason(path, options);
  if (options.memoryCacheBytes === 0) return new MemoryCacheApi(undefined, reserved);
  const counts = new LocalAccessCounts({
    agingIntervalMs: options.memoryCacheAgingIntervalMs,
    maxKeys: Math.min(MAX_TRACKED_KEYS, Math.max(1000, Math.floor((options.memoryCacheBytes / 1024) * TRACKED_KEYS_PER_KIB))),
  });
  return new MemoryCacheApi(
    new MemoryCache({ maxBytes: options.memoryCacheBytes, maxEntryBytes: options.memoryCacheMaxEntryBytes, policy: options.memoryCachePolicy, counts }),
    reserved,
  );
}
