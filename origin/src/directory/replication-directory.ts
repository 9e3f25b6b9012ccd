/**
 * The replication directory (paper Section 2): maps each logical URL to the physical URLs
 * of its replicas. Entries are exact URLs or prefix wildcards ("/images/*").
 *
 * State lives in a Yjs document so that servers can exchange it and converge under
 * concurrent updates and partitions ("eventual consistency of their replication
 * directories", Sections 2 and 5.2). The document holds one flat Y.Map whose keys are
 * (logical, physical) pairs: adding a replica sets a pair, removing one deletes it. A
 * flat set of pairs (instead of a nested map per logical URL) makes concurrent additions
 * of different replicas of one resource commute, because no two servers ever race to
 * create the same container.
 *
 * Lookups go through in-memory indexes kept in step with the document by an observer:
 * exact lookup is one Map access (O(1)); prefix lookup walks the path's ancestors, longest
 * first (O(depth)).
 */
import * as Y from 'yjs';
import { formatUrlSpec, prefixCandidates, type Binding } from '@webpp/core';
import { placementOf, type AutomaticPlacement, type AutomaticReplica } from './automatic-placement.js';
import { computeVersion, orderReplicas, pairKey, parsePairKey, smallest, type PairValue } from './directory-pairs.js';

/** One entry as listed by `entries()` and the JSON listing. */
export interface DirectoryEntry {
  /** Logical URL; a prefix entry ends with "/*". */
  logical: string;
  prefix: boolean;
  /** Physical URLs (prefixes end with "/*"), most preferred first. */
  physical: string[];
}

/** A logical URL resolved against the directory. */
export interface DirectoryMatch {
  /** The logical URL that was looked up (canonical). */
  url: string;
  /** Physical URLs of this very resource (prefix entries already expanded). */
  physicalUrls: string[];
  /** The wire-format binding of the matching entry (exact, or the longest prefix). */
  binding: Binding;
}

type PairsByLogical = Map<string, Map<string, PairValue>>;

const PAIRS_MAP = 'pairs';
const META_MAP = 'meta';

export type DirectoryListener = (directory: ReplicationDirectory) => void;

export class ReplicationDirectory {
  readonly doc: Y.Doc;
  private readonly pairs: Y.Map<PairValue>;
  private readonly meta: Y.Map<number>;
  private readonly exact: PairsByLogical = new Map();
  private readonly prefixes: PairsByLogical = new Map();
  /** physical URL (or physical prefix) -> logical URLs (or logical prefixes) it serves. */
  private readonly reverseExact = new Map<string, Set<string>>();
  private readonly reversePrefix = new Map<string, Set<string>>();
  private readonly bindingCache = new Map<string, Binding>();
  private readonly listeners = new Set<DirectoryListener>();
  private cachedVersion = 0;

  constructor(doc: Y.Doc = new Y.Doc(), private readonly clock: () => number = Date.now) {
    this.doc = doc;
    this.pairs = doc.getMap<PairValue>(PAIRS_MAP);
    this.meta = doc.getMap<number>(META_MAP);
    for (const key of this.pairs.keys()) this.indexKey(key);
    this.cachedVersion = computeVersion(doc);
    this.pairs.observe((event) => {
      for (const key of event.keysChanged as Set<string>) this.indexKey(key);
    });
    doc.on('afterTransaction', () => {
      const version = computeVersion(doc);
      if (version === this.cachedVersion) return;
      this.cachedVersion = version;
      this.bindingCache.clear();
      for (const listener of this.listeners) listener(this);
    });
  }

  /**
   * Monotonic version of this directory for the bindings header: the sum of the Yjs
   * state-vector clocks. Every local change increments this server's clock and a merge
   * only raises clocks, so the sum never decreases, and two servers holding the same
   * state report the same version.
   */
  get version(): number {
    return this.cachedVersion;
  }

  /** Number of (logical, physical) pairs. */
  get size(): number {
    return this.pairs.size;
  }

  onChange(listener: DirectoryListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Records that `physical` holds a replica of `logical`. Both are absolute URLs, or
   * "…/*" prefixes (then both must be). Returns false when the pair was already there.
   * Without `automatic` (a replica added by hand), an automatic pair already there is
   * adopted: its marker goes, so that load-driven replication never withdraws it.
   * Throws TypeError for invalid URLs.
   */
  addReplica(logical: string, physical: string, origin: unknown = 'local', automatic?: AutomaticPlacement): boolean {
    const key = pairKey(logical, physical);
    if (this.pairs.has(key) && (automatic !== undefined || !this.isAutomatic(key))) return false;
    this.doc.transact(() => {
      this.pairs.set(key, automatic === undefined ? { addedAtMs: this.clock() } : { addedAtMs: this.clock(), automatic });
    }, origin);
    return true;
  }

  private isAutomatic(key: string): boolean {
    return placementOf(this.pairs.get(key)) !== undefined;
  }

  /** The marker of an automatic replica; undefined for a replica added by hand or absent. */
  placement(logical: string, physical: string): AutomaticPlacement | undefined {
    return placementOf(this.pairs.get(pairKey(logical, physical)));
  }

  /** Every automatic (logical, physical) pair (exact entries only), sorted by logical URL. */
  automaticReplicas(): AutomaticReplica[] {
    const list: AutomaticReplica[] = [];
    for (const [logical, replicas] of this.exact) {
      for (const [physical, value] of replicas) {
        const placement = placementOf(value);
        if (placement !== undefined) list.push({ logical, physical, placement });
      }
    }
    return list.sort((a, b) => (a.logical < b.logical ? -1 : a.logical > b.logical ? 1 : a.physical < b.physical ? -1 : 1));
  }

  /** Removes one pair. Returns false when it was not there. */
  removeReplica(logical: string, physical: string, origin: unknown = 'local'): boolean {
    const key = pairKey(logical, physical);
    if (!this.pairs.has(key)) return false;
    this.doc.transact(() => {
      this.pairs.delete(key);
      // Y.Map deletions do not advance the state vector; touching a meta key does, so
      // the directory version moves on every change, removals included.
      this.meta.set('changedAtMs', this.clock());
    }, origin);
    return true;
  }

  /** Applies several additions and removals in one transaction (one update, one version bump). */
  batch(changes: { add?: [string, string][]; remove?: [string, string][] }, origin: unknown = 'local'): void {
    const additions = (changes.add ?? []).map(([logical, physical]) => pairKey(logical, physical));
    const removals = (changes.remove ?? []).map(([logical, physical]) => pairKey(logical, physical));
    this.doc.transact(() => {
      // Additions are by hand: an automatic pair already there is adopted (addReplica).
      for (const key of additions) if (!this.pairs.has(key) || this.isAutomatic(key)) this.pairs.set(key, { addedAtMs: this.clock() });
      let removed = false;
      for (const key of removals) {
        if (this.pairs.has(key)) {
          this.pairs.delete(key);
          removed = true;
        }
      }
      if (removed) this.meta.set('changedAtMs', this.clock());
    }, origin);
  }

  /** Whether this exact pair is present. */
  has(logical: string, physical: string): boolean {
    return this.pairs.has(pairKey(logical, physical));
  }

  /**
   * Resolves an absolute URL: the exact entry if there is one (O(1)), else the longest
   * matching prefix entry. A URL with a query that has no exact entry of its own resolves
   * like the URL without it, the query being carried over to every physical URL (the same
   * rule as the client's BindingsIndex). The URL must be canonical (see canonicalUrl).
   */
  lookup(url: string): DirectoryMatch | undefined {
    const exact = this.exact.get(url);
    if (exact !== undefined) {
      const binding = this.bindingFor(url, false, exact);
      return { url, physicalUrls: binding.replicas, binding };
    }
    const queryStart = url.indexOf('?');
    if (queryStart >= 0) {
      const query = url.slice(queryStart);
      const withoutQuery = this.exact.get(url.slice(0, queryStart));
      if (withoutQuery !== undefined) {
        const binding = this.bindingFor(url.slice(0, queryStart), false, withoutQuery);
        return { url, physicalUrls: binding.replicas.map((physical) => physical + query), binding };
      }
    }
    for (const candidate of prefixCandidates(url)) {
      const replicas = this.prefixes.get(candidate);
      if (replicas === undefined) continue;
      const binding = this.bindingFor(candidate, true, replicas);
      const remainder = url.slice(candidate.length);
      return { url, physicalUrls: binding.replicas.map((physicalPrefix) => physicalPrefix + remainder), binding };
    }
    return undefined;
  }

  /**
   * The logical URL that a physical URL serves (reverse lookup): exact, then without the
   * query (carried over), then the longest physical prefix. When a physical URL is listed
   * under several logical URLs, the smallest wins, so every server answers alike.
   */
  logicalOf(physicalUrl: string): string | undefined {
    const exact = this.reverseExact.get(physicalUrl);
    if (exact !== undefined) return smallest(exact);
    const queryStart = physicalUrl.indexOf('?');
    if (queryStart >= 0) {
      const withoutQuery = this.reverseExact.get(physicalUrl.slice(0, queryStart));
      if (withoutQuery !== undefined) return smallest(withoutQuery) + physicalUrl.slice(queryStart);
    }
    for (const candidate of prefixCandidates(physicalUrl)) {
      const logicalPrefixes = this.reversePrefix.get(candidate);
      if (logicalPrefixes === undefined) continue;
      return smallest(logicalPrefixes) + physicalUrl.slice(candidate.length);
    }
    return undefined;
  }

  /** Every entry, sorted by logical URL; physical URLs in binding order. */
  entries(): DirectoryEntry[] {
    const list: DirectoryEntry[] = [];
    for (const [logical, replicas] of this.exact) {
      if (replicas.size === 0) continue;
      list.push({ logical, prefix: false, physical: orderReplicas(logical, replicas) });
    }
    for (const [logical, replicas] of this.prefixes) {
      if (replicas.size === 0) continue;
      list.push({
        logical: `${logical}*`,
        prefix: true,
        physical: orderReplicas(logical, replicas).map((physical) => `${physical}*`),
      });
    }
    return list.sort((a, b) => (a.logical < b.logical ? -1 : a.logical > b.logical ? 1 : 0));
  }

  /** JSON listing: `{ version, entries }`. */
  toJSON(): { version: number; entries: DirectoryEntry[] } {
    return { version: this.version, entries: this.entries() };
  }

  private bindingFor(logical: string, prefix: boolean, replicas: Map<string, PairValue>): Binding {
    const cacheKey = prefix ? `${logical}*` : logical;
    let binding = this.bindingCache.get(cacheKey);
    if (binding === undefined) {
      binding = { logical, prefix, replicas: orderReplicas(logical, replicas) };
      this.bindingCache.set(cacheKey, binding);
    }
    return binding;
  }

  /** Brings the indexes in line with the document for one pair key. */
  private indexKey(key: string): void {
    const pair = parsePairKey(key);
    if (pair === undefined) return; // written by an incompatible peer; ignored everywhere alike
    const [logical, physical] = pair;
    const forward = logical.prefix ? this.prefixes : this.exact;
    const reverse = logical.prefix ? this.reversePrefix : this.reverseExact;
    const value = this.pairs.get(key);
    this.bindingCache.delete(formatUrlSpec(logical));
    if (value !== undefined) {
      let replicas = forward.get(logical.url);
      if (replicas === undefined) forward.set(logical.url, (replicas = new Map<string, PairValue>()));
      replicas.set(physical.url, value);
      let logicals = reverse.get(physical.url);
      if (logicals === undefined) reverse.set(physical.url, (logicals = new Set()));
      logicals.add(logical.url);
    } else {
      const replicas = forward.get(logical.url);
      replicas?.delete(physical.url);
      if (replicas?.size === 0) forward.delete(logical.url);
      const logicals = reverse.get(physical.url);
      logicals?.delete(logical.url);
      if (logicals?.size === 0) reverse.delete(physical.url);
    }
  }
}
