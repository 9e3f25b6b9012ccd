/**
 * The hot object cache of one server (origin/src/cache/): replacement order of each policy
 * (GOS Section 4.4), aging of the access counts, the byte bound, lifetimes, invalidation by
 * path and by prefix. A virtual clock drives lifetimes and aging.
 */
import { describe, expect, it } from 'vitest';
import { LocalAccessCounts } from '../src/cache/access-counts.js';
import { MemoryCache } from '../src/cache/memory-cache.js';
import { weightedLfuPriority, type PolicyName } from '../src/cache/policies.js';
import { MemoryCacheApi } from '../src/cache/cache-api.js';
import type { CacheEntry } from '../src/cache/types.js';

const AGING_MS = 1000;

function makeCache(policy: PolicyName, maxBytes: number, clock = { nowMs: 0 }) {
  const counts = new LocalAccessCounts({ agingIntervalMs: AGING_MS, maxKeys: 1000 });
  const cache = new MemoryCache({ maxBytes, maxEntryBytes: maxBytes, policy, counts, clock: () => clock.nowMs });
  return { cache, counts, clock };
}

/** What a request does: counts the access, touches the entry when held. */
function access(cache: MemoryCache, key: string, times = 1): void {
  for (let i = 0; i < times; i += 1) {
    cache.recordAccess(key);
    cache.get(key);
  }
}

function offer(cache: MemoryCache, key: string, bodyBytes: number, ttlMs?: number): CacheEntry | undefined {
  cache.recordAccess(key);
  return cache.store({ key, response: { headers: { 'content-type': 'text/plain' }, body: Buffer.alloc(bodyBytes, 7) }, source: 'static', ttlMs });
}

function keys(cache: MemoryCache): string[] {
  return [...cache.values()].map((entry) => entry.key).sort();
}

describe('replacement order', () => {
  it('LRU evicts the least recently used entry, whatever its count', () => {
    const { cache } = makeCache('lru', 3000);
    offer(cache, '/a', 500);
    offer(cache, '/b', 500);
    offer(cache, '/c', 500);
    access(cache, '/a', 10); // popular, but…
    access(cache, '/c');
    access(cache, '/b'); // …/a is now the least recent
    const before = cache.counters.evictions;
    expect(offer(cache, '/d', 500)).toBeDefined();
    expect(keys(cache)).toEqual(['/b', '/c', '/d']);
    expect(cache.counters.evictions).toBe(before + 1);
  });

  it('LFU-Aging evicts the least often used entry, and refuses a newcomer colder than every victim', () => {
    const { cache } = makeCache('lfu-aging', 3000);
    offer(cache, '/a', 500);
    offer(cache, '/b', 500);
    offer(cache, '/c', 500);
    access(cache, '/a', 5);
    access(cache, '/b', 2);
    access(cache, '/c', 3);
    // /d seen 3 times: it displaces /b (count 3), not /c or /a.
    access(cache, '/d', 2);
    expect(offer(cache, '/d', 500)).toBeDefined();
    expect(keys(cache)).toEqual(['/a', '/c', '/d']);
    // /e seen once: colder than all, not admitted, nothing evicted.
    const evictions = cache.counters.evictions;
    expect(offer(cache, '/e', 500)).toBeUndefined();
    expect(keys(cache)).toEqual(['/a', '/c', '/d']);
    expect(cache.counters.evictions).toBe(evictions);
    expect(cache.counters.rejections).toBe(1);
  });

  it('Weighted-LFU divides the count by log2 of the size: of two equally popular objects the larger goes', () => {
    expect(weightedLfuPriority({ count: 8, sizeBytes: 256, lastAccessTick: 0 })).toBe(1);
    expect(weightedLfuPriority({ count: 8, sizeBytes: 65_536, lastAccessTick: 0 })).toBe(0.5);
    const { cache } = makeCache('weighted-lfu', 150_000);
    offer(cache, '/small', 300);
    offer(cache, '/large', 120_000);
    access(cache, '/small', 3);
    access(cache, '/large', 3);
    access(cache, '/new', 3);
    expect(offer(cache, '/new', 70_000)).toBeDefined();
    expect(keys(cache)).toEqual(['/new', '/small']);
  });

  it('Weighted-LFU keeps a popular large object, and will not displace a small cold object for a large cold one', () => {
    const { cache } = makeCache('weighted-lfu', 30_000);
    offer(cache, '/large', 20_000);
    access(cache, '/large', 40);
    offer(cache, '/small', 500);
    offer(cache, '/small2', 9000);
    expect(keys(cache)).toContain('/large');
    expect(keys(cache)).not.toContain('/small2');
  });
});

describe('eviction order kept incrementally (heap, lazy re-ranking)', () => {
  it.each(['lfu-aging', 'weighted-lfu', 'lru'] as const)('%s: every victim ranks lowest of what is held, while counts keep changing under the cache', (policy) => {
    const { cache } = makeCache(policy, 40 * 756);
    let seed = 7;
    const random = (): number => ((seed = (seed * 16807) % 2147483647) / 2147483647);
    const victims: { key: string; rank: number; lowest: number }[] = [];
    const rankOf = (entry: CacheEntry): number =>
      policy === 'lru' ? entry.lastAccessTick : policy === 'lfu-aging' ? cache.countOf(entry.key) : weightedLfuPriority({ count: cache.countOf(entry.key), sizeBytes: entry.sizeBytes, lastAccessTick: 0 });
    cache.onRemove((entry, reason) => {
      if (reason !== 'evicted') return;
      const others = [...cache.values()].filter((held) => held !== entry);
      victims.push({ key: entry.key, rank: rankOf(entry), lowest: Math.min(...others.map(rankOf)) });
    });
    for (let round = 0; round < 400; round += 1) {
      const key = `/k${Math.floor(random() ** 2 * 120)}`;
      if (cache.peek(key) === undefined) {
        for (let i = 0; i < 1 + Math.floor(random() * 3); i += 1) cache.recordAccess(key);
        offer(cache, key, 200 + Math.floor(random() * 600));
      } else {
        access(cache, key, 1 + Math.floor(random() * 3));
      }
    }
    expect(victims.length).toBeGreaterThan(50);
    for (const victim of victims) expect(victim.rank).toBeLessThanOrEqual(victim.lowest);
  });
});

describe('aging (GOS LFU-Aging: counts halved at the end of every interval)', () => {
  it('halves a count once per elapsed interval', () => {
    const { counts } = makeCache('lfu-aging', 1000);
    for (let i = 0; i < 12; i += 1) counts.record('/x', 100);
    expect(counts.count('/x', 999)).toBe(12);
    expect(counts.count('/x', 1000)).toBe(6);
    expect(counts.count('/x', 3500)).toBe(1);
    counts.record('/x', 3500);
    expect(counts.count('/x', 3500)).toBe(2);
    expect(counts.count('/x', 100_000)).toBe(0);
  });

  it('lets a once-hot object that went cold be replaced by a newly hot one', () => {
    const { cache, clock } = makeCache('lfu-aging', 2000);
    offer(cache, '/old', 500);
    access(cache, '/old', 30);
    offer(cache, '/steady', 500);
    access(cache, '/steady', 3);
    clock.nowMs = 5 * AGING_MS; // /old: 31 → 0 after five halvings
    access(cache, '/new', 3);
    expect(offer(cache, '/new', 500)).toBeDefined();
    expect(keys(cache)).toEqual(['/new', '/steady']);
  });
});

describe('byte bound and lifetimes', () => {
  it('never holds more bytes than its bound, and refuses what is larger than an entry may be', () => {
    const { cache } = makeCache('lru', 10_000);
    for (let i = 0; i < 100; i += 1) {
      offer(cache, `/f${i}`, 100 + ((i * 37) % 900));
      expect(cache.sizeBytes).toBeLessThanOrEqual(10_000);
    }
    const summed = [...cache.values()].reduce((sum, entry) => sum + entry.sizeBytes, 0);
    expect(cache.sizeBytes).toBe(summed);
    expect(cache.size).toBeGreaterThan(5);
    expect(offer(cache, '/huge', 20_000)).toBeUndefined();
  });

  it('does not serve an entry past its lifetime, and counts it expired', () => {
    const { cache, clock } = makeCache('lru', 10_000);
    offer(cache, '/short', 10, 1000);
    offer(cache, '/forever', 10);
    clock.nowMs = 999;
    expect(cache.get('/short')).toBeDefined();
    clock.nowMs = 1000;
    expect(cache.get('/short')).toBeUndefined();
    expect(cache.get('/forever')).toBeDefined();
    expect(cache.counters.expirations).toBe(1);
    expect(cache.sizeBytes).toBe([...cache.values()][0]?.sizeBytes);
  });

  it('makes room from expired entries first', () => {
    const { cache, clock } = makeCache('lfu-aging', 2000);
    offer(cache, '/hot-but-expired', 500, 100);
    access(cache, '/hot-but-expired', 50);
    offer(cache, '/cold', 500);
    clock.nowMs = 200;
    expect(offer(cache, '/next', 500)).toBeDefined();
    expect(keys(cache)).toEqual(['/cold', '/next']);
    expect(cache.counters.evictions).toBe(0);
  });
});

describe('invalidation', () => {
  it('removes one path with all its queries, or every key under a prefix, and tells the cluster hook', async () => {
    const { cache } = makeCache('lru', 100_000);
    const api = new MemoryCacheApi(cache);
    const told: unknown[] = [];
    api.setHooks({ onInvalidate: async (target) => void told.push(target) });
    for (const key of ['/news', '/news?page=2', '/news/a', '/news/b', '/newsletter', '/sport/a']) offer(cache, key, 10);
    expect(await api.invalidate('/news')).toBe(2);
    expect(keys(cache)).toEqual(['/news/a', '/news/b', '/newsletter', '/sport/a']);
    expect(await api.invalidate({ prefix: '/news/' })).toBe(2);
    expect(keys(cache)).toEqual(['/newsletter', '/sport/a']);
    expect(told).toEqual([{ path: '/news' }, { prefix: '/news/' }]);
    expect(cache.counters.invalidations).toBe(4);
    await expect(api.invalidate('news')).rejects.toThrow(/start with/);
  });

  it('tells the cluster hook about evictions only (the GOS second chance)', () => {
    const { cache } = makeCache('lru', 2000);
    const api = new MemoryCacheApi(cache);
    const evicted: string[] = [];
    api.setHooks({ onEvict: (entry) => void evicted.push(entry.key) });
    offer(cache, '/a', 500);
    offer(cache, '/b', 500);
    offer(cache, '/c', 500);
    void api.invalidate('/b');
    expect(evicted).toEqual(['/a']);
  });

  it('put makes a content validator, so new content after an invalidation has a new one', async () => {
    const { cache } = makeCache('lru', 100_000);
    const api = new MemoryCacheApi(cache);
    const first = api.put('/scores', 'home 1 – away 0', { contentType: 'text/plain', ttlMs: 5000 });
    expect(first?.etag).toMatch(/^"wpc-/);
    expect(api.query('/scores')?.expiresAtMs).toBe(5000);
    await api.invalidate('/scores');
    expect(api.query('/scores')).toBeUndefined();
    const second = api.put('/scores', 'home 1 – away 1', { contentType: 'text/plain' });
    expect(second?.etag).not.toBe(first?.etag);
    expect(second?.expiresAtMs).toBeNull();
  });

  it('does nothing when the cache is off', async () => {
    const api = new MemoryCacheApi(undefined);
    expect(api.put('/a', 'x')).toBeUndefined();
    expect(await api.invalidate({ prefix: '/' })).toBe(0);
    expect(api.query('/a')).toBeUndefined();
    expect(api.summary().enabled).toBe(false);
  });
});
