import { canonicalHttpUrl } from '../_private/whatwg-url.js';
import { prefixCandidates } from '../url-spec.js';
import type { Binding, BindingsDocument, ResolvedBinding } from '../types.js';
import { MAX_VALIDATOR_LENGTH, VALIDATOR_PATTERN } from './format.js';

interface Entry {
  binding: Binding;
  directoryVersion: number;
}

/** The serialised BindingsIndex, as stored in IndexedDB. */
export interface BindingsIndexJSON {
  formatVersion: 1;
  entries: Entry[];
}

export interface BindingsIndexOptions {
  /** Most bindings kept; the least recently applied are evicted first. Default 10 000. */
  maxEntries?: number;
}

export interface ApplyResult {
  /** Bindings stored (new, or replacing one of the same or an older directory version). */
  applied: number;
  /** Bindings ignored: a newer directory version already bound their logical URL, or they were invalid. */
  ignored: number;
}

/**
 * What a client knows about bindings: logical URL → physical URLs (Web++ paper, Section
 * 3.2). Exact bindings are found in O(1); otherwise the longest prefix binding wins.
 * Query strings: an exact binding with the same query wins, else the binding of the URL
 * without its query applies and the query is carried over to every physical URL.
 */
export class BindingsIndex {
  private readonly exact = new Map<string, Entry>();
  private readonly prefixes = new Map<string, Entry>();
  private readonly maxEntries: number;

  constructor(options: BindingsIndexOptions = {}) {
    const maxEntries = options.maxEntries ?? 10_000;
    if (!Number.isInteger(maxEntries) || maxEntries < 1) {
      throw new RangeError(`maxEntries must be an integer >= 1 (got ${maxEntries})`);
    }
    this.maxEntries = maxEntries;
  }

  /** Number of bindings held (exact and prefix). */
  get size(): number {
    return this.exact.size + this.prefixes.size;
  }

  /** The highest directory version among the held bindings (0 when empty). */
  get directoryVersion(): number {
    let version = 0;
    for (const map of [this.exact, this.prefixes]) {
      for (const entry of map.values()) version = Math.max(version, entry.directoryVersion);
    }
    return version;
  }

  /**
   * Adds the bindings of a decoded document. A binding replaces the one of the same logical
   * URL unless that one came from a newer directory version (older never overwrites newer).
   */
  apply(document: BindingsDocument): ApplyResult {
    let applied = 0;
    let ignored = 0;
    for (const binding of document.bindings) {
      const entry = validEntry({ binding, directoryVersion: document.directoryVersion });
      if (entry && this.store(entry)) applied++;
      else ignored++;
    }
    return { applied, ignored };
  }

  /** Where the replicas of a logical URL are; undefined when no binding covers it. */
  resolve(logicalUrl: string): ResolvedBinding | undefined {
    const url = canonicalHttpUrl(logicalUrl);
    if (!url) return undefined;
    const { href, origin } = url;
    const exact = this.exact.get(href);
    if (exact) return resolved(href, exact, exact.binding.replicas);

    const queryStart = url.hasQuery ? href.indexOf('?', origin.length) : href.length;
    const withoutQuery = href.slice(0, queryStart);
    const search = href.slice(queryStart);
    if (search) {
      const entry = this.exact.get(withoutQuery);
      if (entry && entry.binding.replicas.every((url) => !url.includes('?'))) {
        return resolved(href, entry, entry.binding.replicas.map((url) => url + search));
      }
    }
    // Longest prefix: try each "/"-terminated ancestor of the path, deepest first.
    for (const candidate of prefixCandidates(withoutQuery)) {
      const entry = this.prefixes.get(candidate);
      if (entry) {
        const rest = href.slice(candidate.length);
        return resolved(href, entry, entry.binding.replicas.map((prefix) => prefix + rest));
      }
    }
    return undefined;
  }

  /** Forgets every binding. */
  clear(): void {
    this.exact.clear();
    this.prefixes.clear();
  }

  toJSON(): BindingsIndexJSON {
    return { formatVersion: 1, entries: [...this.exact.values(), ...this.prefixes.values()] };
  }

  /** Rebuilds an index from stored JSON. Tolerant: malformed entries are dropped; never throws on data. */
  static fromJSON(json: unknown, options: BindingsIndexOptions = {}): BindingsIndex {
    const index = new BindingsIndex(options);
    if (typeof json !== 'object' || json === null) return index;
    const { formatVersion, entries } = json as Record<string, unknown>;
    if (formatVersion !== 1 || !Array.isArray(entries)) return index;
    for (const entry of entries) {
      const valid = validEntry(entry);
      if (valid) index.store(valid);
    }
    return index;
  }

  private store(entry: Entry): boolean {
    const map = entry.binding.prefix ? this.prefixes : this.exact;
    const key = entry.binding.logical;
    const current = map.get(key);
    if (current && current.directoryVersion > entry.directoryVersion) return false;
    map.delete(key); // re-insert: Map order doubles as least-recently-applied order
    map.set(key, entry);
    this.evict();
    return true;
  }

  private evict(): void {
    while (this.size > this.maxEntries) {
      const victims = this.exact.size > 0 ? this.exact : this.prefixes;
      const oldest = victims.keys().next().value as string;
      victims.delete(oldest);
    }
  }
}

function resolved(logical: string, entry: Entry, physicalUrls: string[]): ResolvedBinding {
  return { logical, physicalUrls, binding: entry.binding, directoryVersion: entry.directoryVersion };
}

/** Validates an entry as the decoder validates the wire, with URLs in canonical form (no fragment). */
function validEntry(value: unknown): Entry | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { binding, directoryVersion } = value as Record<string, unknown>;
  if (typeof directoryVersion !== 'number' || !Number.isSafeInteger(directoryVersion) || directoryVersion < 0) {
    return undefined;
  }
  if (typeof binding !== 'object' || binding === null) return undefined;
  const { logical, prefix, replicas, validator, sizeBytes } = binding as Record<string, unknown>;
  if (typeof prefix !== 'boolean' || !Array.isArray(replicas) || replicas.length === 0) return undefined;
  const canonical = (url: unknown): string | undefined => {
    const parsed = typeof url === 'string' ? canonicalHttpUrl(url) : undefined;
    if (!parsed || (prefix && (parsed.hasQuery || !parsed.href.endsWith('/')))) return undefined;
    return parsed.href;
  };
  const logicalHref = canonical(logical);
  const replicaHrefs = replicas.map(canonical);
  if (logicalHref === undefined || replicaHrefs.some((href) => href === undefined)) return undefined;
  const clean: Binding = { logical: logicalHref, prefix, replicas: replicaHrefs as string[] };
  if (validator !== undefined) {
    if (typeof validator !== 'string' || validator.length > MAX_VALIDATOR_LENGTH || !VALIDATOR_PATTERN.test(validator)) {
      return undefined;
    }
    clean.validator = validator;
  }
  // A size is a hint: a malformed one is dropped, not the binding.
  if (!prefix && typeof sizeBytes === 'number' && Number.isSafeInteger(sizeBytes) && sizeBytes >= 0) clean.sizeBytes = sizeBytes;
  return { binding: clean, directoryVersion };
}

/**
 * The server (origin, scheme://host:port) of a physical URL: the key of the latency table.
 * @throws TypeError when the URL is not an absolute http(s) URL.
 */
export function serverOf(physicalUrl: string): string {
  const url = canonicalHttpUrl(physicalUrl);
  if (!url) throw new TypeError(`not an absolute http(s) URL: ${JSON.stringify(physicalUrl)}`);
  return url.origin;
}
