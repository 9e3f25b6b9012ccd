/**
 * SHA-256 digests of the resources a bindings header names (docs/protocol.md, "Content
 * digests"), so that the worker can check a replica's bytes. A digest is given only where
 * this server knows the bytes every replica serves, cheaply:
 *  - a replica in the replica store: the digest it is stored under;
 *  - a static file under `contentRoot` (the folder every server of a "/*" entry serves):
 *    hashed once, cached by (path, size, mtime), bounded in entries; re-checked with a stat
 *    at most once per `revalidateMs`.
 * Never for HTML (pages get the script tag injected: their bytes are this server's
 * transform, not the file), nor for proxied or dynamic responses (no file to hash).
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { ContentDigest } from '@webpp/core';
import type { ReplicationDirectory } from '../directory/replication-directory.js';
import type { ReplicaStore } from '../replicas/replica-store.js';
import { fileUnderRoot, HTML_PATH, localPathOf } from './local-resource.js';

export interface ContentDigestsOptions {
  /** This server's public origin: which physical URL of a binding is served here. */
  publicUrl: string;
  /** Folder the static files are served from; undefined: stored replicas only. */
  contentRoot: string | undefined;
  directory: ReplicationDirectory;
  store: ReplicaStore;
  /** Most file digests cached. Default 10 000. */
  maxEntries?: number;
  /** Files larger than this are not hashed. Default 128 MiB. */
  maxFileBytes?: number;
  /** A cached file digest is trusted without a new stat for this long. Default 1 000 ms. */
  revalidateMs?: number;
  now?: () => number;
}

interface FileEntry {
  sizeBytes: number;
  mtimeMs: number;
  checkedAtMs: number;
  integrity: Promise<string | undefined>;
}

export class ContentDigests {
  private readonly files = new Map<string, FileEntry>();
  private readonly root: string | undefined;
  private readonly maxEntries: number;
  private readonly maxFileBytes: number;
  private readonly revalidateMs: number;
  private readonly now: () => number;

  constructor(private readonly options: ContentDigestsOptions) {
    this.root = options.contentRoot === undefined ? undefined : resolve(options.contentRoot);
    this.maxEntries = options.maxEntries ?? 10_000;
    this.maxFileBytes = options.maxFileBytes ?? 128 * 1024 * 1024;
    this.revalidateMs = options.revalidateMs ?? 1_000;
    this.now = options.now ?? Date.now;
  }

  /** Digests of those of `logicalUrls` this server can vouch for, in the same order. Never rejects. */
  async digestsOf(logicalUrls: readonly string[]): Promise<ContentDigest[]> {
    const found = await Promise.all(logicalUrls.map((url) => this.digestOf(url).catch(() => undefined)));
    const digests: ContentDigest[] = [];
    found.forEach((integrity, i) => {
      if (integrity !== undefined) digests.push({ logical: logicalUrls[i] as string, integrity });
    });
    return digests;
  }

  /** The digest of one logical URL, or undefined. */
  async digestOf(logicalUrl: string): Promise<string | undefined> {
    const path = localPathOf(logicalUrl, this.options.publicUrl, this.options.directory);
    if (path === undefined || HTML_PATH.test(path)) return undefined;
    const stored = this.options.store.get(path);
    if (stored !== undefined) {
      if (/html/i.test(stored.contentType)) return undefined;
      return `sha256-${Buffer.from(stored.digest, 'hex').toString('base64')}`;
    }
    const file = fileUnderRoot(this.root, path);
    return file === undefined ? undefined : this.fileDigest(file);
  }

  private async fileDigest(file: string): Promise<string | undefined> {
    const nowMs = this.now();
    const cached = this.files.get(file);
    if (cached !== undefined && nowMs - cached.checkedAtMs < this.revalidateMs) return cached.integrity;
    const info = await stat(file).catch(() => undefined);
    if (info === undefined || !info.isFile() || info.size > this.maxFileBytes) {
      this.files.delete(file);
      return undefined;
    }
    if (cached !== undefined && cached.sizeBytes === info.size && cached.mtimeMs === info.mtimeMs) {
      cached.checkedAtMs = nowMs;
      return cached.integrity;
    }
    const entry: FileEntry = { sizeBytes: info.size, mtimeMs: info.mtimeMs, checkedAtMs: nowMs, integrity: hashFile(file) };
    this.files.delete(file);
    this.files.set(file, entry);
    while (this.files.size > this.maxEntries) this.files.delete(this.files.keys().next().value as string);
    const integrity = await entry.integrity;
    // Written while it was read: hash it again next time.
    const after = await stat(file).catch(() => undefined);
    if (after === undefined || after.size !== info.size || after.mtimeMs !== info.mtimeMs) {
      this.files.delete(file);
      return undefined;
    }
    return integrity;
  }
}

function hashFile(file: string): Promise<string | undefined> {
  return new Promise((done) => {
    const hash = createHash('sha256');
    createReadStream(file)
      .on('data', (chunk) => hash.update(chunk))
      .on('error', () => done(undefined))
      .on('end', () => done(`sha256-${hash.digest('base64')}`));
  });
}
