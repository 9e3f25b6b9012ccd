import type { Binding } from '@webpp/core';

/**
 * In-memory cache of pre-processing results (paper Section 5.1: "the Web++ servlet caches
 * the post-processed resources in its main memory"). Keyed by page URL + validator (ETag
 * or Last-Modified, or a digest of a dynamic body) + directory version, so that a changed
 * file or a changed directory can never be answered from a stale entry. Least recently
 * used entries are evicted to stay within `maxBytes`; a directory change clears the cache
 * outright, since no old entry can be hit again.
 */

export interface PreprocessResult {
  /** Encoded bindings header value, or undefined when the response gets none. */
  bindingsHeader: string | undefined;
  /** The body to send, when pre-processing changed it (script injection). */
  body: Buffer | undefined;
  /** Number of bindings in the header. */
  bindingCount: number;
  /**
   * For a parsed HTML page: the logical URLs of its embedded resources (htmlReferences),
   * which batch transmission reuses instead of parsing the page again.
   */
  embeddedUrls?: string[];
  /** The bindings the header encodes, to encode them again with content digests (content-digests.ts). */
  bindings?: Binding[];
  /** Referenced logical URLs that a binding of the header covers, in document order. */
  boundUrls?: string[];
  /** The header with digests, memoised for the digests it was encoded with (`fingerprint`). */
  digested?: { fingerprint: string; header: string };
}

interface Entry {
  result: PreprocessResult;
  bytes: number;
}

const ENTRY_OVERHEAD_BYTES = 200;

export class PreprocessCache {
  private readonly entries = new Map<string, Entry>();
  private totalBytes = 0;
  hits = 0;
  misses = 0;

  constructor(readonly maxBytes: number) {}

  static key(url: string, validator: string, directoryVersion: number, variant: string): string {
    return `${directoryVersion}\u0000${variant}\u0000${validator}\u0000${url}`;
  }

  get(key: string): PreprocessResult | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) {
      this.misses += 1;
      return undefined;
    }
    this.hits += 1;
    // Re-insert to mark as most recently used (Map keeps insertion order).
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.result;
  }

  set(key: string, result: PreprocessResult): void {
    const embeddedChars = [...(result.embeddedUrls ?? []), ...(result.boundUrls ?? [])].reduce((sum, url) => sum + url.length, 0);
    const bytes =
      ENTRY_OVERHEAD_BYTES + key.length * 2 + (result.bindingsHeader?.length ?? 0) * 3 + (result.body?.byteLength ?? 0) + embeddedChars * 2;
    if (bytes > this.maxBytes) return;
    const previous = this.entries.get(key);
    if (previous !== undefined) {
      this.entries.delete(key);
      this.totalBytes -= previous.bytes;
    }
    this.entries.set(key, { result, bytes });
    this.totalBytes += bytes;
    for (const [oldestKey, oldest] of this.entries) {
      if (this.totalBytes <= this.maxBytes) break;
      this.entries.delete(oldestKey);
      this.totalBytes -= oldest.bytes;
    }
  }

  clear(): void {
    this.entries.clear();
    this.totalBytes = 0;
  }

  get size(): number {
    return this.entries.size;
  }

  get bytes(): number {
    return this.totalBytes;
  }
}
