import type { Binding } from '@webpp/core';
import { LRUCache } from 'lru-cache';

/**
 * In-memory cache of pre-processing results (paper Section 5.1: "the Web++ servlet caches
 * the post-processed resources in its main memory"). Keyed by page URL + validator (ETag
 * or Last-Modified, or a digest of a dynamic body) + directory version, so that a changed
 * file or a changed directory can never be answered from a stale entry. Least recently
 * used entries are evicted to stay within `maxBytes` (lru-cache `maxSize`); a directory
 * change clears the cache outright, since no old entry can be hit again.
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

const ENTRY_OVERHEAD_BYTES = 200;

/** Estimated memory an entry holds (UTF-16 strings count twice their length). */
function entryBytes(result: PreprocessResult, key: string): number {
  const embeddedChars = [...(result.embeddedUrls ?? []), ...(result.boundUrls ?? [])].reduce((sum, url) => sum + url.length, 0);
  return ENTRY_OVERHEAD_BYTES + key.length * 2 + (result.bindingsHeader?.length ?? 0) * 3 + (result.body?.byteLength ?? 0) + embeddedChars * 2;
}

export class PreprocessCache {
  hits = 0;
  misses = 0;

  private readonly entries: LRUCache<string, PreprocessResult> | undefined;

  /** `maxBytes` 0 turns caching off. */
  constructor(readonly maxBytes: number) {
    // An entry larger than maxBytes is not stored (lru-cache's maxEntrySize defaults to maxSize).
    this.entries = maxBytes >= 1 ? new LRUCache({ maxSize: maxBytes, sizeCalculation: entryBytes }) : undefined;
  }

  static key(url: string, validator: string, directoryVersion: number, variant: string): string {
    return `${directoryVersion}\u0000${variant}\u0000${validator}\u0000${url}`;
  }

  get(key: string): PreprocessResult | undefined {
    const result = this.entries?.get(key);
    if (result === undefined) this.misses += 1;
    else this.hits += 1;
    return result;
  }

  set(key: string, result: PreprocessResult): void {
    this.entries?.set(key, result);
  }

  clear(): void {
    this.entries?.clear();
  }

  get size(): number {
    return this.entries?.size ?? 0;
  }

  get bytes(): number {
    return this.entries?.calculatedSize ?? 0;
  }
}
