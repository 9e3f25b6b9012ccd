/**
 * SHA-256 digests of the resources a bindings header names (docs/protocol.md, "Content
 * digests"), so that the worker can check a replica's bytes. A digest is given only where
 * this server knows the bytes every replica serves, cheaply:
 *  - a replica in the replica store: the digest it is stored under;
 *  - a static file under `contentRoot` (the folder every server of a "/*" entry serves):
 *    hashed once per version, re-checked with a stat at most once a second (file-digests.ts,
 *    the same view the memory cache's copies of static files follow).
 * Never for HTML (pages get the script tag injected: their bytes are this server's
 * transform, not the file), nor for proxied or dynamic responses (no file to hash).
 */
import { resolve } from 'node:path';
import type { ContentDigest } from '@webpp/core';
import type { ReplicationDirectory } from '../directory/replication-directory.js';
import type { ReplicaStore } from '../replicas/replica-store.js';
import { FileDigests } from './file-digests.js';
import { isHtmlContentType, isPagePath } from '../html-pages.js';
import { fileUnderRoot, localPathOf } from './local-resource.js';

export interface ContentDigestsOptions {
  /** This server's public origin: which physical URL of a binding is served here. */
  publicUrl: string;
  /** Folder the static files are served from; undefined: stored replicas only. */
  contentRoot: string | undefined;
  directory: ReplicationDirectory;
  store: ReplicaStore;
  /** The server's view of its files' digests (file-digests.ts), shared with the memory cache. */
  files?: FileDigests;
}

export class ContentDigests {
  private readonly files: FileDigests;
  private readonly root: string | undefined;

  constructor(private readonly options: ContentDigestsOptions) {
    this.root = options.contentRoot === undefined ? undefined : resolve(options.contentRoot);
    this.files = options.files ?? new FileDigests();
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
    if (path === undefined) return undefined;
    // A page's bytes are rewritten by pre-processing: they are not the stored or file bytes.
    const stored = this.options.store.get(path);
    if (stored !== undefined) return isHtmlContentType(stored.contentType) ? undefined : `sha256-${Buffer.from(stored.digest, 'hex').toString('base64')}`;
    if (isPagePath(path)) return undefined;
    const file = fileUnderRoot(this.root, path);
    return file === undefined ? undefined : this.files.digestOf(file);
  }
}
