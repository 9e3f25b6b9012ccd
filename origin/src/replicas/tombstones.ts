/**
 * Tombstones: the version of each replica this server deleted, so that a push of that
 * version or an older one (a captured push replayed after the DELETE, or a late retry) is
 * refused instead of bringing the content back. A tombstone is the deletion's own
 * version: the newer of the last stored version and (deletion time, this server), so
 * every version written before the deletion, on this server's clock, is older.
 *
 *   <root>/<sha-256 of path>.json   { formatVersion, path, version, deletedAtMs }
 *
 * Written with writeFileAtomic before the replica itself is removed, so a crash in
 * between leaves the tombstone and the replica, never neither. Bounded: at most
 * `maxCount` tombstones (the oldest deletion is forgotten first) and none older than
 * `maxAgeMs`. Forgetting is safe once every signature made before the deletion has
 * expired (maxClockSkewMs); before that, the directory check (replica-manager.ts) still
 * refuses pushes to a path this server no longer holds.
 */
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { removeStaleTempFiles, writeFileAtomic } from '../directory/atomic-file.js';
import { KeyedMutex } from './keyed-mutex.js';
import { compareVersions, formatVersion, parseVersion, type ReplicaVersion } from './replica-version.js';

export const DEFAULT_MAX_TOMBSTONES = 10_000;
export const DEFAULT_TOMBSTONE_MAX_AGE_MS = 24 * 60 * 60 * 1000;

export interface Tombstone {
  path: string;
  version: ReplicaVersion;
  deletedAtMs: number;
}

export interface TombstoneLogger {
  warn(object: object, message: string): void;
}

export interface TombstoneBounds {
  maxCount: number;
  maxAgeMs: number;
}

export class Tombstones {
  /** In deletion order (oldest first): a Map keeps insertion order, and `record` re-inserts. */
  private readonly byPath = new Map<string, Tombstone>();
  private readonly fileLocks = new KeyedMutex();

  constructor(
    readonly root: string,
    private readonly log: TombstoneLogger,
    private readonly bounds: TombstoneBounds = { maxCount: DEFAULT_MAX_TOMBSTONES, maxAgeMs: DEFAULT_TOMBSTONE_MAX_AGE_MS },
  ) {}

  /** Loads the persisted tombstones, dropping expired and unreadable ones. */
  async open(nowMs: number = Date.now()): Promise<void> {
    await mkdir(this.root, { recursive: true });
    await removeStaleTempFiles(this.root);
    const loaded: Tombstone[] = [];
    for (const name of await readdir(this.root)) {
      if (!name.endsWith('.json')) continue;
      const tombstone = parseTombstone(await readFile(join(this.root, name), 'utf8').catch(() => ''));
      if (tombstone === undefined || fileName(tombstone.path) !== name) {
        this.log.warn({ file: join(this.root, name) }, 'webpp tombstones: ignoring unreadable file');
        continue;
      }
      loaded.push(tombstone);
    }
    loaded.sort((a, b) => a.deletedAtMs - b.deletedAtMs);
    for (const tombstone of loaded) this.byPath.set(tombstone.path, tombstone);
    await this.prune(nowMs);
  }

  /** The version deleted at `path`, while remembered. */
  get(path: string, nowMs: number = Date.now()): ReplicaVersion | undefined {
    const tombstone = this.byPath.get(path);
    if (tombstone === undefined || nowMs - tombstone.deletedAtMs > this.bounds.maxAgeMs) return undefined;
    return tombstone.version;
  }

  get size(): number {
    return this.byPath.size;
  }

  /**
   * Records the deletion at `path` of `lastVersion` (undefined when nothing was stored) and
   * returns the tombstone's version. Durable when this resolves. Callers serialise per path.
   */
  async record(path: string, lastVersion: ReplicaVersion | undefined, writer: string, nowMs: number): Promise<ReplicaVersion> {
    const deletion: ReplicaVersion = { timeMs: Math.floor(nowMs), writer };
    let version = lastVersion !== undefined && compareVersions(lastVersion, deletion) > 0 ? lastVersion : deletion;
    const previous = this.get(path, nowMs);
    if (previous !== undefined && compareVersions(previous, version) > 0) version = previous;
    const tombstone: Tombstone = { path, version, deletedAtMs: nowMs };
    // In memory first (a concurrent prune then keeps the file), on disk before returning.
    this.byPath.delete(path);
    this.byPath.set(path, tombstone);
    await this.fileLocks.run(path, () => writeFileAtomic(join(this.root, fileName(path)), formatTombstone(tombstone)));
    await this.prune(nowMs);
    return version;
  }

  /** Forgets expired tombstones, then the oldest ones beyond `maxCount`. */
  private async prune(nowMs: number): Promise<void> {
    const forget: string[] = [];
    for (const tombstone of this.byPath.values()) {
      const expired = nowMs - tombstone.deletedAtMs > this.bounds.maxAgeMs;
      if (!expired && this.byPath.size - forget.length <= this.bounds.maxCount) break;
      forget.push(tombstone.path);
    }
    for (const path of forget) {
      this.byPath.delete(path);
      await this.fileLocks.run(path, async () => {
        if (this.byPath.has(path)) return; // recorded again meanwhile
        await unlink(join(this.root, fileName(path))).catch(() => undefined);
      });
    }
  }
}

function fileName(path: string): string {
  return `${createHash('sha256').update(path).digest('hex')}.json`;
}

function formatTombstone(tombstone: Tombstone): string {
  return `${JSON.stringify({ formatVersion: 1, path: tombstone.path, version: formatVersion(tombstone.version), deletedAtMs: tombstone.deletedAtMs })}\n`;
}

function parseTombstone(text: string): Tombstone | undefined {
  let json: Record<string, unknown>;
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  const version = parseVersion(typeof json.version === 'string' ? json.version : undefined);
  if (json.formatVersion !== 1 || typeof json.path !== 'string' || typeof json.deletedAtMs !== 'number' || version === undefined) return undefined;
  return { path: json.path, version, deletedAtMs: json.deletedAtMs };
}
