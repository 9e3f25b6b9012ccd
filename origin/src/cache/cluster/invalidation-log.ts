/**
 * Recent invalidations, so that a copy made before an invalidation cannot come back after
 * it: an object pushed between servers (a fill for its home, a second chance) carries the
 * time its body was read from disk or upstream, and is refused when an invalidation of its
 * path (or of a prefix of it) happened at or after that time. GOS (Section 4.6) has the
 * home invalidate the copies it knows of; this closes the race with a copy in flight.
 *
 * Pushes older than `memoryMs` are refused outright, so the log only needs to remember
 * that long. Bounded: at most `maxEntries`; when full, the oldest are dropped and the
 * refusal horizon moves up to them (conservative: more pushes refused, never a stale one
 * accepted).
 */
export class InvalidationLog {
  /** key ("=path" or "^prefix") → time of the last invalidation, in insertion order. */
  private readonly entries = new Map<string, number>();
  private horizonMs = -Infinity;

  constructor(
    private readonly memoryMs: number,
    private readonly maxEntries: number,
    private readonly now: () => number = Date.now,
  ) {}

  record(target: { path: string } | { prefix: string }, atMs: number = this.now()): void {
    const key = 'path' in target ? `=${target.path}` : `^${target.prefix}`;
    this.entries.delete(key);
    this.entries.set(key, atMs);
    this.trim();
  }

  /** True when a copy of `path` read at `readAtMs` may still be current. */
  isCurrent(path: string, readAtMs: number): boolean {
    this.trim();
    const nowMs = this.now();
    if (readAtMs < nowMs - this.memoryMs || readAtMs <= this.horizonMs) return false;
    // A path invalidation covers the path with any query (cache/memory-cache.ts matchesTarget).
    const queryStart = path.indexOf('?');
    for (const exactKey of queryStart < 0 ? [path] : [path, path.slice(0, queryStart)]) {
      const exact = this.entries.get(`=${exactKey}`);
      if (exact !== undefined && exact >= readAtMs) return false;
    }
    for (const [key, atMs] of this.entries) {
      if (key.startsWith('^') && atMs >= readAtMs && path.startsWith(key.slice(1))) return false;
    }
    return true;
  }

  private trim(): void {
    const oldestKeptMs = this.now() - this.memoryMs;
    for (const [key, atMs] of this.entries) {
      if (this.entries.size <= this.maxEntries && atMs >= oldestKeptMs) break;
      this.entries.delete(key);
      if (atMs >= oldestKeptMs) this.horizonMs = Math.max(this.horizonMs, atMs);
    }
  }
}
