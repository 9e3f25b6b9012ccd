/**
 * The replicas this server stores (paper Section 5.2: POST "creates a new copy of the
 * resource", PUT updates it, DELETE removes it). Content is stored by digest and switched
 * in by an atomic metadata write, so a crash can never leave a half-written or mismatched
 * replica:
 *
 *   <root>/blobs/<sha-256 hex>          content, written with writeFileAtomic
 *   <root>/meta/<sha-256 of path>.json  { path, logicalUrl, contentType, version, digest, size }
 *
 * A replica is visible only once its metadata file has been renamed into place, and the
 * metadata only ever names a blob that is already durable. Unreferenced blobs and temporary
 * files are removed at start-up. File names are digests, so no request path ever reaches
 * the file system.
 */
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { removeStaleTempFiles, syncFolder, writeFileAtomic } from '../directory/atomic-file.js';
import { formatVersion, parseVersion, type ReplicaVersion } from './replica-version.js';
import { KeyedMutex } from './keyed-mutex.js';

export interface StoredReplica {
  /** Local path this replica is served at (canonical, percent-encoded). */
  path: string;
  /** The logical URL it is a replica of. */
  logicalUrl: string;
  contentType: string;
  version: ReplicaVersion;
  /** SHA-256 of the content, hex. */
  digest: string;
  size: number;
  updatedAtMs: number;
}

export interface ReplicaStoreLogger {
  warn(object: object, message: string): void;
}

export class ReplicaStore {
  private readonly replicas = new Map<string, StoredReplica>();
  private readonly blobFolder: string;
  private readonly metaFolder: string;
  /** Blob writes and deletions of one digest are serialised, and blobs in use by a put are pinned. */
  private readonly blobLocks = new KeyedMutex();
  private readonly pinned = new Map<string, number>();

  constructor(readonly root: string, private readonly log: ReplicaStoreLogger) {
    this.blobFolder = join(root, 'blobs');
    this.metaFolder = join(root, 'meta');
  }

  /** Loads every complete replica; drops leftovers of interrupted writes. */
  async open(): Promise<void> {
    await mkdir(this.blobFolder, { recursive: true });
    await mkdir(this.metaFolder, { recursive: true });
    await removeStaleTempFiles(this.blobFolder);
    await removeStaleTempFiles(this.metaFolder);
    for (const name of await readdir(this.metaFolder)) {
      if (!name.endsWith('.json')) continue;
      const file = join(this.metaFolder, name);
      const replica = parseMeta(await readFile(file, 'utf8').catch(() => ''));
      if (replica === undefined || metaName(replica.path) !== name) {
        this.log.warn({ file }, 'webpp replica store: ignoring unreadable metadata file');
        continue;
      }
      const blob = await stat(this.blobPath(replica.digest)).catch(() => undefined);
      if (blob === undefined || blob.size !== replica.size) {
        this.log.warn({ file, path: replica.path }, 'webpp replica store: content missing or wrong size; replica dropped');
        continue;
      }
      this.replicas.set(replica.path, replica);
    }
    const referenced = new Set([...this.replicas.values()].map((replica) => replica.digest));
    for (const name of await readdir(this.blobFolder)) {
      if (!referenced.has(name)) await unlink(join(this.blobFolder, name)).catch(() => undefined);
    }
  }

  get(path: string): StoredReplica | undefined {
    return this.replicas.get(path);
  }

  list(): StoredReplica[] {
    return [...this.replicas.values()].sort((a, b) => (a.path < b.path ? -1 : 1));
  }

  get size(): number {
    return this.replicas.size;
  }

  /** Stores content durably and makes it the replica at `path`. Callers serialise per path. */
  async put(
    path: string,
    content: Uint8Array,
    details: { logicalUrl: string; contentType: string; version: ReplicaVersion; nowMs: number },
  ): Promise<StoredReplica> {
    const digest = createHash('sha256').update(content).digest('hex');
    const blobPath = this.blobPath(digest);
    await this.blobLocks.run(digest, async () => {
      this.pin(digest);
      const existing = await stat(blobPath).catch(() => undefined);
      if (existing === undefined || existing.size !== content.byteLength) await writeFileAtomic(blobPath, content);
    });
    try {
      return await this.switchTo(path, digest, content.byteLength, details);
    } finally {
      this.unpin(digest);
    }
  }

  private pin(digest: string): void {
    this.pinned.set(digest, (this.pinned.get(digest) ?? 0) + 1);
  }

  /** Returns true when the last pin went. */
  private unpin(digest: string): boolean {
    const pins = (this.pinned.get(digest) ?? 1) - 1;
    if (pins === 0) this.pinned.delete(digest);
    else this.pinned.set(digest, pins);
    return pins === 0;
  }

  private async switchTo(
    path: string,
    digest: string,
    size: number,
    details: { logicalUrl: string; contentType: string; version: ReplicaVersion; nowMs: number },
  ): Promise<StoredReplica> {
    const replica: StoredReplica = {
      path,
      logicalUrl: details.logicalUrl,
      contentType: details.contentType,
      version: details.version,
      digest,
      size,
      updatedAtMs: details.nowMs,
    };
    await writeFileAtomic(join(this.metaFolder, metaName(path)), formatMeta(replica));
    const previous = this.replicas.get(path);
    this.replicas.set(path, replica);
    if (previous !== undefined && previous.digest !== digest) await this.collect(previous.digest);
    return replica;
  }

  /** Removes the replica at `path`. Returns it, or undefined when there was none. */
  async delete(path: string): Promise<StoredReplica | undefined> {
    const previous = this.replicas.get(path);
    if (previous === undefined) return undefined;
    await unlink(join(this.metaFolder, metaName(path))).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error;
    });
    await syncFolder(this.metaFolder);
    this.replicas.delete(path);
    await this.collect(previous.digest);
    return previous;
  }

  /** Where a replica's content is on disk, for a file server (@fastify/send): folder and file name. */
  blobFile(replica: StoredReplica): { root: string; name: string } {
    return { root: this.blobFolder, name: replica.digest };
  }

  /**
   * Keeps a replica's content on disk until the returned function is called, even when the
   * replica is updated or deleted meanwhile: a response streaming it is never cut. Call it
   * in the same tick as get(), before the store can switch the path to other content.
   */
  hold(replica: StoredReplica): () => void {
    const { digest } = replica;
    this.pin(digest);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (this.unpin(digest)) void this.collect(digest);
    };
  }

  async readAll(replica: StoredReplica): Promise<Buffer> {
    return readFile(this.blobPath(replica.digest));
  }

  private blobPath(digest: string): string {
    return join(this.blobFolder, digest);
  }

  /** Deletes a blob no replica refers to any more (and no put is about to refer to). */
  private async collect(digest: string): Promise<void> {
    await this.blobLocks.run(digest, async () => {
      if (this.pinned.has(digest)) return;
      for (const replica of this.replicas.values()) if (replica.digest === digest) return;
      await unlink(this.blobPath(digest)).catch(() => undefined);
    });
  }
}

/** Strong entity tag of a stored replica: its content digest, identical on every server. */
export function replicaEtag(replica: StoredReplica): string {
  return `"sha256-${Buffer.from(replica.digest, 'hex').toString('base64url')}"`;
}

function metaName(path: string): string {
  return `${createHash('sha256').update(path).digest('hex')}.json`;
}

function formatMeta(replica: StoredReplica): string {
  return `${JSON.stringify({ formatVersion: 1, ...replica, version: formatVersion(replica.version) }, null, 2)}\n`;
}

function parseMeta(text: string): StoredReplica | undefined {
  let json: Record<string, unknown>;
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  const version = parseVersion(typeof json.version === 'string' ? json.version : undefined);
  if (
    json.formatVersion !== 1 ||
    typeof json.path !== 'string' ||
    typeof json.logicalUrl !== 'string' ||
    typeof json.contentType !== 'string' ||
    typeof json.digest !== 'string' ||
    !/^[0-9a-f]{64}$/.test(json.digest) ||
    typeof json.size !== 'number' ||
    typeof json.updatedAtMs !== 'number' ||
    version === undefined
  ) {
    return undefined;
  }
  return {
    path: json.path,
    logicalUrl: json.logicalUrl,
    contentType: json.contentType,
    version,
    digest: json.digest,
    size: json.size,
    updatedAtMs: json.updatedAtMs,
  };
}
