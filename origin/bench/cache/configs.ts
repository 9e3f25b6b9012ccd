/**
 * The configurations the cache benchmark compares, same run, same memory per server: their
 * `webpp-origin` flags. `cacheBytes` is one server's cache size.
 */
export interface BenchConfig {
  name: string;
  flags: (cacheBytes: number) => string[];
}

export const CONFIGS: BenchConfig[] = [
  { name: 'no-cache', flags: () => [] },
];
