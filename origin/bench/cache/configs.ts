/**
 * The configurations the cache benchmark compares, same run, same memory per server: their
 * `webpp-origin` flags. `cacheBytes` is one server's cache size.
 */
export interface BenchConfig {
  name: string;
  flags: (cacheBytes: number) => string[];
}

const cache = (cacheBytes: number, policy: string): string[] => ['--memory-cache-bytes', String(cacheBytes), '--memory-cache-policy', policy];

export const CONFIGS: BenchConfig[] = [
  { name: 'no-cache', flags: () => [] },
  { name: 'independent-lru', flags: (bytes) => [...cache(bytes, 'lru'), '--no-memory-cache-cooperative'] },
  { name: 'coop-weighted-lfu', flags: (bytes) => cache(bytes, 'weighted-lfu') },
  { name: 'coop-lfu-aging', flags: (bytes) => cache(bytes, 'lfu-aging') },
  { name: 'coop-lru', flags: (bytes) => cache(bytes, 'lru') },
];
