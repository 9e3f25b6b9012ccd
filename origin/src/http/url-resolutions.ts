/**
 * What the directory says about a request URL: its logical URL (the page URL references
 * resolve against), whether it is a replica, and its own binding. Memoised per raw request
 * URL until the directory changes, so the hot path parses no URL; the memo is a bounded LRU.
 */
import { canonicalUrl } from '@webpp/core';
import { LRUCache } from 'lru-cache';
import type { DirectoryMatch, ReplicationDirectory } from '../directory/replication-directory.js';

export interface Resolution {
  /** The logical URL of the resource the request names. */
  pageUrl: string;
  /** True when the directory maps the request's physical URL to another logical URL. */
  replicated: boolean;
  /** The directory entry of the logical URL, if any. */
  own: DirectoryMatch | undefined;
}

/** Default memory bound of the memo: ~10 000 typical entries. */
const DEFAULT_RESOLUTIONS_MAX_BYTES = 8 * 1024 * 1024;
const ENTRY_OVERHEAD_BYTES = 200;

export class UrlResolutions {
  // lru-cache holds no undefined: a URL that does not parse is memoised as { resolution: undefined }.
  private readonly memo: LRUCache<string, { resolution: Resolution | undefined }>;

  constructor(
    private readonly directory: ReplicationDirectory,
    private readonly publicUrl: string,
    maxSizeBytes = DEFAULT_RESOLUTIONS_MAX_BYTES,
  ) {
    this.memo = new LRUCache({
      maxSize: maxSizeBytes,
      sizeCalculation: ({ resolution }, url) =>
        ENTRY_OVERHEAD_BYTES + 2 * (url.length + (resolution?.pageUrl.length ?? 0) + JSON.stringify(resolution?.own ?? '').length),
    });
    directory.onChange(() => this.memo.clear());
  }

  resolve(url: string): Resolution | undefined {
    const memoised = this.memo.get(url);
    if (memoised !== undefined) return memoised.resolution;
    const physicalUrl = canonicalUrl(this.publicUrl + url);
    let resolution: Resolution | undefined;
    if (physicalUrl !== undefined) {
      const mappedLogical = this.directory.logicalOf(physicalUrl);
      const pageUrl = mappedLogical ?? physicalUrl;
      resolution = { pageUrl, replicated: mappedLogical !== undefined, own: this.directory.lookup(pageUrl) };
    }
    this.memo.set(url, { resolution });
    return resolution;
  }

  get size(): number {
    return this.memo.size;
  }
}
