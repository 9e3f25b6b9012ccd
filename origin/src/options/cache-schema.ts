/**
 * Options of the memory cache (origin/src/cache/, issue 15), composed into the plugin's
 * options (plugin-schema.ts). The cache is off by default (memoryCacheBytes 0): a cached copy
 * can outlive a change made behind the server's back (a file edited on disk, an upstream
 * whose data changed) for up to its lifetime, and how much memory to give it, and which
 * staleness is acceptable, are the operator's call. Off, every response is produced as before.
 */
import { Type } from 'typebox';
import { POLICY_NAMES } from '../cache/policies.js';
import { defaulted } from './resolved.js';

const MiB = 1024 * 1024;

export const cacheOptionProperties = {
  memoryCacheBytes: defaulted(
    Type.Integer({
      minimum: 0,
      default: 0,
      description:
        'Byte bound of the [memory cache](#memory-cache) of responses (bodies with their headers); `0` turns it off. Static files, proxied responses the upstream marks fresh, and routes declaring `config.webppCache` are answered from memory.',
      cli: { group: 'Limits and tuning' },
    }),
  ),
  memoryCachePolicy: defaulted(
    Type.Enum([...POLICY_NAMES], {
      default: 'weighted-lfu',
      description:
        "Replacement policy of the memory cache (GOS): `'weighted-lfu'` (aged access count ÷ log2 size), `'lfu-aging'` (aged access count) or `'lru'`. Weighted-LFU keeps more small objects, which suits pages of many small resources; `'lru'` for working sets that shift quickly.",
      cli: { group: 'Limits and tuning', arg: 'name' },
    }),
  ),
  memoryCacheTtlMs: defaulted(
    Type.Integer({
      minimum: 1,
      default: 60_000,
      description:
        'Lifetime in memory of static files and of routes declaring `webppCache` without a `ttlMs`: how long a file changed on disk may still be answered from memory (unless invalidated through the API; with `contentDigests`, a changed file is read again within a second).',
      cli: { group: 'Limits and tuning' },
    }),
  ),
  memoryCacheMaxEntryBytes: defaulted(
    Type.Integer({ minimum: 1, default: 2 * MiB, description: 'Largest response body the memory cache holds. Raise it to keep large files in memory too, at the cost of fewer entries.', cli: { group: 'Limits and tuning' } }),
  ),
};
