/**
 * Body sizes of the exact bindings a bindings header names (docs/protocol.md, "Binding
 * sizes"), so that the client can rank small resources by first byte and large ones by
 * total time. A size is given only where this server knows the bytes without reading them:
 *  - a replica in the replica store: its stored length;
 *  - a static file under `contentRoot`: a stat, cached, re-checked at most once per
 *    `revalidateMs`.
 * Never for HTML (pre-processing may inject the page script), prefix bindings, dynamic or
 * proxied responses, or URLs with a query. Synchronous, since pre-processing is: a stat per
 * bound file on a cache miss, and pre-processing results are cached per page.
 */
import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Binding } from '@webpp/core';
import type { ReplicationDirectory } from '../directory/replication-directory.js';
import type { ReplicaStore } from '../replicas/replica-store.js';
import { isHtmlContentType, isPagePath } from '../html-pages.js';
import { fileUnderRoot, localPathOf } from './local-resource.js';

export interface ResourceSizesOptions {
  /** This server's public origin: which physical URL of a binding is served here. */
  publicUrl: string;
  /** Folder the static files are served from; undefined: stored replicas only. */
  contentRoot: string | undefined;
  directory: ReplicationDirectory;
  store: ReplicaStore;
  /** Most file sizes cached. Default 10 000. */
  maxEntries?: number;
  /** A cached size is trusted without a new stat for this long. Default 1 000 ms. */
  revalidateMs?: number;
  now?: () => number;
}

export class ResourceSizes {
  private readonly files = new Map<string, { sizeBytes: number | undefined; checkedAtMs: number }>();
  private readonly root: string | undefined;
  private readonly maxEntries: number;
  private readonly revalidateMs: number;
  private readonly now: () => number;

  constructor(private readonly options: ResourceSizesOptions) {
    this.root = options.contentRoot === undefined ? undefined : resolve(options.contentRoot);
    this.maxEntries = options.maxEntries ?? 10_000;
    this.revalidateMs = options.revalidateMs ?? 1_000;
    this.now = options.now ?? Date.now;
  }

  /** The bindings, each exact one with `sizeBytes` where known (new objects; the inputs are not changed). */
  withSizes(bindings: readonly Binding[]): Binding[] {
    return bindings.map((binding) => {
      if (binding.prefix || binding.sizeBytes !== undefined) return binding;
      const sizeBytes = this.sizeOf(binding.logical);
      return sizeBytes === undefined ? binding : { ...binding, sizeBytes };
    });
  }

  /** The body size of one logical URL in bytes, or undefined. */
  sizeOf(logicalUrl: string): number | undefined {
    const path = localPathOf(logicalUrl, this.options.publicUrl, this.options.directory);
    if (path === undefined) return undefined;
    // A page's bytes are rewritten by pre-processing: its size is not the stored or file size.
    const stored = this.options.store.get(path);
    if (stored !== undefined) return isHtmlContentType(stored.contentType) ? undefined : stored.size;
    if (isPagePath(path)) return undefined;
    const file = fileUnderRoot(this.root, path);
    return file === undefined ? undefined : this.fileSize(file);
  }

  private fileSize(file: string): number | undefined {
    const nowMs = this.now();
    const cached = this.files.get(file);
    if (cached !== undefined && nowMs - cached.checkedAtMs < this.revalidateMs) return cached.sizeBytes;
    let sizeBytes: number | undefined;
    try {
      const info = statSync(file);
      sizeBytes = info.isFile() ? info.size : undefined;
    } catch {
      sizeBytes = undefined;
    }
    this.files.delete(file);
    this.files.set(file, { sizeBytes, checkedAtMs: nowMs });
    while (this.files.size > this.maxEntries) this.files.delete(this.files.keys().next().value as string);
    return sizeBytes;
  }
}
