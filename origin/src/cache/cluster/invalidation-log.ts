/**
 * Recent invalidations, so that a copy made before an invalidation cannot come back after
 * it: an object pushed between servers (a fill for its home, a second chance) or answered
 * to a lookup carries the time its body was read from disk or upstream, and is refused when
 * an invalidation of its path (or of a prefix of it) was issued at or after that time. GOS
 * (Section 4.6) has the home invalidate the copies it knows of; this closes the race with a
 * copy in flight.
 *
 * Times: an invalidation is dated by the server that issued it (`atMs`). For `graceMs` after
 * it arrived here, copies read before its arrival are refused too, whatever `atMs` says (a
 * sender whose clock is behind, copies still in flight); after that, only copies read before
 * `atMs` are. (Dating it by its arrival for good refused every copy made between its issue and
 * a late arrival, e.g. on a peer that was frozen: the new content put right after an
 * invalidation was never taken from a peer there.)
 *
 * Bounded: exact entries are kept for `memoryMs` and at most `maxEntries`; older ones are
 * folded, by the time they were issued, into FORGOTTEN_BUCKETS buckets by a hash of the
 * path (prefixes: into one time), which refuse what they covered and, conservatively, what
 * shares their bucket. (Refusing every copy read more than `memoryMs` ago instead made
 * long-lived entries — an API put without a lifetime, a proxied answer fresh for an hour —
 * unreachable from the servers that did not hold them, after a few minutes.)
 */
const FORGOTTEN_BUCKETS = 4096;

interface Entry {
  /** When the invalidation was issued (its sender's clock). */
  atMs: number;
  /** When it arrived here (this server's clock). */
  receivedAtMs: number;
}

export class InvalidationLog {
  /** path → its last invalidation, in arrival order. */
  private readonly paths = new Map<string, Entry>();
  /** prefix → its last invalidation, in arrival order. */
  private readonly prefixes = new Map<string, Entry>();
  /** Latest forgotten path invalidation, by bucket of the path's hash. */
  private readonly forgottenPaths = new Float64Array(FORGOTTEN_BUCKETS).fill(Number.NEGATIVE_INFINITY);
  private forgottenPrefixesMs = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly memoryMs: number,
    private readonly maxEntries: number,
    private readonly now: () => number = Date.now,
    private readonly graceMs: number = 0,
  ) {}

  /** An invalidation issued at `atMs` (by its sender's clock) arrived now. */
  record(target: { path: string } | { prefix: string }, atMs: number = this.now()): void {
    const [map, key] = 'path' in target ? [this.paths, target.path] : [this.prefixes, target.prefix];
    const previous = map.get(key);
    map.delete(key);
    map.set(key, { atMs: Math.max(atMs, previous?.atMs ?? Number.NEGATIVE_INFINITY), receivedAtMs: this.now() });
    this.trim();
  }

  /** True when a copy of `path` read at `readAtMs` may still be current. */
  isCurrent(path: string, readAtMs: number): boolean {
    this.trim();
    const nowMs = this.now();
    // A path invalidation covers the path with any query (cache/memory-cache.ts matchesTarget).
    const queryStart = path.indexOf('?');
    for (const exactKey of queryStart < 0 ? [path] : [path, path.slice(0, queryStart)]) {
      if (this.refuses(this.paths.get(exactKey), readAtMs, nowMs) || this.forgottenPathMs(exactKey) >= readAtMs) return false;
    }
    if (this.forgottenPrefixesMs >= readAtMs) return false;
    for (const [prefix, entry] of this.prefixes) if (path.startsWith(prefix) && this.refuses(entry, readAtMs, nowMs)) return false;
    return true;
  }

  private refuses(entry: Entry | undefined, readAtMs: number, nowMs: number): boolean {
    if (entry === undefined) return false;
    return readAtMs <= entry.atMs || (readAtMs <= entry.receivedAtMs && nowMs - entry.receivedAtMs < this.graceMs);
  }

  private trim(): void {
    const oldestKeptMs = this.now() - this.memoryMs;
    for (const [path, entry] of this.paths) {
      if (this.paths.size <= this.maxEntries && entry.receivedAtMs >= oldestKeptMs) break;
      this.paths.delete(path);
      const bucket = bucketOf(path);
      this.forgottenPaths[bucket] = Math.max(this.forgottenPaths[bucket] ?? Number.NEGATIVE_INFINITY, entry.atMs);
    }
    for (const [prefix, entry] of this.prefixes) {
      if (this.prefixes.size <= this.maxEntries && entry.receivedAtMs >= oldestKeptMs) break;
      this.prefixes.delete(prefix);
      this.forgottenPrefixesMs = Math.max(this.forgottenPrefixesMs, entry.atMs);
    }
  }

  private forgottenPathMs(path: string): number {
    return this.forgottenPaths[bucketOf(path)] ?? Number.NEGATIVE_INFINITY;
  }
}

/** FNV-1a over the path's UTF-16 code units, to a bucket. */
function bucketOf(path: string): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < path.length; index += 1) hash = Math.imul(hash ^ path.charCodeAt(index), 0x01000193);
  return (hash >>> 0) % FORGOTTEN_BUCKETS;
}
