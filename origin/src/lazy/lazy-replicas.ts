/**
 * Lazy replication on a co-op (issue 14; DCWS, Baker and Moon 1998, Section 4.4): the
 * directory entry of an automatic replica comes first; the content follows on the first
 * request for it, fetched from the home or any other holder with a signed peer call
 * (routes/peer-content.ts), streamed through to the requests waiting meanwhile
 * (shared-fetch.ts) and stored in the replica store through the replica manager, so that a
 * PUT pushed meanwhile (a newer version) wins over the fetched one. Every T_validate the
 * co-op revalidates its copies with a conditional request ("co-op server validation"); a
 * copy whose directory pair was withdrawn or recalled is dropped from the store.
 */
import type { FastifyBaseLogger } from 'fastify';
import { resolve } from 'node:path';
import { stat } from 'node:fs/promises';
import { fileUnderRoot } from '../bindings/local-resource.js';
import type { ReplicationDirectory } from '../directory/replication-directory.js';
import { WEBPP_ERR_STALE_VERSION } from '../errors.js';
import type { ResolvedOptions } from '../options.js';
import type { ReplicaManager } from '../replicas/replica-manager.js';
import { replicaEtag, type ReplicaStore } from '../replicas/replica-store.js';
import { parseVersion, REPLICA_VERSION_HEADER } from '../replicas/replica-version.js';
import { PEER_CONTENT_PATH } from '../routes/peer-content.js';
import { clusterRequest, signedGetStream } from '../sync/cluster-client.js';
import { SharedFetch } from './shared-fetch.js';

export interface LazyReplicasDependencies {
  options: Pick<ResolvedOptions, 'publicUrl' | 'contentRoot' | 'clusterSecret' | 'peerTimeoutMs' | 'maxReplicaBytes' | 'replicationValidateIntervalMs'>;
  directory: ReplicationDirectory;
  store: ReplicaStore;
  replicas: ReplicaManager;
  log: FastifyBaseLogger;
}

/** What one path of this server needs fetched from. */
export interface LazyTarget {
  logicalUrl: string;
  /** Physical URLs of the other holders, the home first. */
  holders: string[];
}

export interface LazyReplicationStats {
  fetches: number;
  fetchFailures: number;
  /** Requests answered from a fetch another request had started. */
  sharedRequests: number;
  /** Fetches that moved to another holder after some bytes (Range resume). */
  resumedFetches: number;
  revalidations: number;
  revalidationUpdates: number;
  droppedCopies: number;
  inFlight: number;
}

/** A stored copy of an automatic replica this server holds for another (home) server. */
interface AutomaticCopy {
  path: string;
  logicalUrl: string;
  state: 'listed' | 'withdrawn' | 'adopted';
}

export class LazyReplicas {
  private readonly inFlight = new Map<string, SharedFetch>();
  private readonly contentRoot: string | undefined;
  private revalidateTimer: ReturnType<typeof setInterval> | undefined;
  private unsubscribe: (() => void) | undefined;
  private sweepQueued = false;
  private revalidating: Promise<void> | undefined;
  /** Copies being stored and sweeps running: stop() waits for them, so nothing writes the data folder after close. */
  private readonly writing = new Set<Promise<void>>();
  private stopped = false;
  private readonly counters: Omit<LazyReplicationStats, 'inFlight'> = {
    fetches: 0,
    fetchFailures: 0,
    sharedRequests: 0,
    resumedFetches: 0,
    revalidations: 0,
    revalidationUpdates: 0,
    droppedCopies: 0,
  };

  constructor(private readonly deps: LazyReplicasDependencies) {
    this.contentRoot = deps.options.contentRoot === undefined ? undefined : resolve(deps.options.contentRoot);
  }

  stats(): LazyReplicationStats {
    return { ...this.counters, inFlight: this.inFlight.size };
  }

  /**
   * The fetch to answer a request for `path` from, when the directory lists this server as
   * an automatic replica there and it has no content for it (no stored replica, no static
   * file); undefined otherwise (the request goes on to the other routes).
   */
  async target(path: string): Promise<LazyTarget | undefined> {
    if (this.deps.options.clusterSecret === undefined || this.deps.store.get(path) !== undefined) return undefined;
    const physical = this.deps.replicas.physicalUrlOf(path);
    const logicalUrl = this.deps.directory.logicalOf(physical);
    if (logicalUrl === undefined) return undefined;
    const placement = this.deps.directory.placement(logicalUrl, physical);
    if (placement === undefined) return undefined;
    if (this.inFlight.has(path)) return this.holdersOf(logicalUrl, physical, placement.home);
    const file = fileUnderRoot(this.contentRoot, path);
    if (file !== undefined && (await stat(file).catch(() => undefined))?.isFile() === true) return undefined;
    return this.holdersOf(logicalUrl, physical, placement.home);
  }

  private holdersOf(logicalUrl: string, own: string, home: string): LazyTarget | undefined {
    const listed = (this.deps.directory.lookup(logicalUrl)?.physicalUrls ?? []).filter((url) => url !== own);
    const fromHome = listed.filter((url) => url.startsWith(`${home}/`));
    const holders = [...fromHome, ...listed.filter((url) => !fromHome.includes(url))];
    return holders.length === 0 ? undefined : { logicalUrl, holders };
  }

  /** The fetch of `path` in flight, or a new one; stored when it completes. */
  fetch(path: string, target: LazyTarget): SharedFetch {
    const running = this.inFlight.get(path);
    if (running !== undefined) {
      this.counters.sharedRequests += 1;
      return running;
    }
    const secret = this.deps.options.clusterSecret ?? '';
    const timeoutMs = this.deps.options.peerTimeoutMs;
    const fetch = new SharedFetch(
      target.holders,
      (holder, headers) => signedGetStream(secret, contentUrl(holder), { headers, headTimeoutMs: timeoutMs, idleTimeoutMs: timeoutMs }),
      this.deps.options.maxReplicaBytes,
    );
    this.counters.fetches += 1;
    this.inFlight.set(path, fetch);
    this.track(this.store(path, target, fetch).finally(() => this.inFlight.delete(path)));
    return fetch;
  }

  private async store(path: string, target: LazyTarget, fetch: SharedFetch): Promise<void> {
    let body: Buffer;
    try {
      body = await fetch.body;
    } catch (error) {
      this.counters.fetchFailures += 1;
      this.deps.log.warn({ path, logicalUrl: target.logicalUrl, err: (error as Error).message }, 'webpp lazy replication: fetch failed');
      return;
    }
    if (fetch.sources.length > 1) this.counters.resumedFetches += 1;
    const head = await fetch.head;
    await this.keep(path, target.logicalUrl, body, head.contentType, head.version);
    this.fetchedHere.add(path);
    this.deps.log.info({ path, logicalUrl: target.logicalUrl, sizeBytes: body.byteLength, from: fetch.sources }, 'webpp lazy replication: copy stored');
  }

  /** Stores a version through the replica manager (newer-only, listed-only); a newer one there already wins. */
  private async keep(path: string, logicalUrl: string, body: Buffer, contentType: string, version: NonNullable<ReturnType<typeof parseVersion>>): Promise<boolean> {
    try {
      await this.deps.replicas.receive(path, body, contentType, version, logicalUrl, { source: 'peer' });
      return true;
    } catch (error) {
      if (!(error instanceof WEBPP_ERR_STALE_VERSION)) this.deps.log.warn({ path, err: (error as Error).message }, 'webpp lazy replication: copy not stored');
      return false;
    }
  }

  /** Starts revalidation (every T_validate) and the sweep of withdrawn copies. */
  start(): void {
    if (this.revalidateTimer !== undefined) return;
    this.revalidateTimer = setInterval(() => void this.revalidateAll(), this.deps.options.replicationValidateIntervalMs);
    this.revalidateTimer.unref();
    this.unsubscribe = this.deps.directory.onChange(() => this.queueSweep());
    this.queueSweep();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.revalidateTimer);
    this.revalidateTimer = undefined;
    this.unsubscribe?.();
    await this.revalidating;
    // The copies whose bodies are arriving are stored first (a write after close raced the
    // removal of the folder, and could land after the data folder's lock was released).
    while (this.writing.size > 0) await Promise.all(this.writing);
  }

  private track(work: Promise<void>): void {
    const tracked = work.catch(() => undefined).finally(() => this.writing.delete(tracked));
    this.writing.add(tracked);
  }

  /**
   * Stored copies of automatic replicas placed on this server by another (home) server:
   * `listed` while the automatic pair is in the directory; `withdrawn` once it left it;
   * `adopted` when the pair is still listed but without its marker (an operator added the
   * replica by hand meanwhile: it is no longer a lazy copy, and is kept).
   */
  private automaticCopies(): AutomaticCopy[] {
    const own = this.deps.options.publicUrl;
    return this.deps.store.list().flatMap((replica): AutomaticCopy[] => {
      const physical = this.deps.replicas.physicalUrlOf(replica.path);
      const placement = this.deps.directory.placement(replica.logicalUrl, physical);
      const copy = { path: replica.path, logicalUrl: replica.logicalUrl };
      if (placement !== undefined) return placement.home === own ? [] : [{ ...copy, state: 'listed' }];
      if (!this.fetchedHere.has(replica.path)) return [];
      return [{ ...copy, state: this.deps.directory.has(replica.logicalUrl, physical) ? 'adopted' : 'withdrawn' }];
    });
  }

  /** Paths whose stored copy came from a lazy fetch or an automatic placement (dropped when withdrawn). */
  private readonly fetchedHere = new Set<string>();

  private queueSweep(): void {
    if (this.sweepQueued || this.stopped) return;
    this.sweepQueued = true;
    setImmediate(() => {
      this.sweepQueued = false;
      if (!this.stopped) this.track(this.sweep());
    });
  }

  /** Drops the copies whose automatic pair left the directory (withdrawn, recalled). */
  private async sweep(): Promise<void> {
    for (const copy of this.automaticCopies()) {
      if (copy.state === 'listed') {
        this.fetchedHere.add(copy.path);
        continue;
      }
      this.fetchedHere.delete(copy.path);
      if (copy.state === 'adopted') continue;
      if (this.inFlight.has(copy.path)) continue;
      await this.deps.store.delete(copy.path);
      this.counters.droppedCopies += 1;
      this.deps.log.info({ path: copy.path, logicalUrl: copy.logicalUrl }, 'webpp lazy replication: withdrawn copy dropped');
    }
  }

  /** One T_validate round: a conditional request per automatic copy, to its holders in turn. */
  async revalidateAll(): Promise<void> {
    if (this.revalidating !== undefined) return this.revalidating;
    this.revalidating = (async () => {
      for (const copy of this.automaticCopies()) if (copy.state === 'listed') await this.revalidate(copy.path, copy.logicalUrl);
    })().finally(() => {
      this.revalidating = undefined;
    });
    return this.revalidating;
  }

  private async revalidate(path: string, logicalUrl: string): Promise<void> {
    const stored = this.deps.store.get(path);
    const secret = this.deps.options.clusterSecret;
    const placement = this.deps.directory.placement(logicalUrl, this.deps.replicas.physicalUrlOf(path));
    if (stored === undefined || secret === undefined || placement === undefined) return;
    const target = this.holdersOf(logicalUrl, this.deps.replicas.physicalUrlOf(path), placement.home);
    this.counters.revalidations += 1;
    for (const holder of target?.holders ?? []) {
      try {
        const response = await clusterRequest(secret, contentUrl(holder), {
          method: 'GET',
          headers: { 'if-none-match': replicaEtag(stored) },
          timeoutMs: this.deps.options.peerTimeoutMs,
          maxResponseBytes: this.deps.options.maxReplicaBytes,
        });
        if (response.status === 304) return;
        const version = parseVersion(response.headers[REPLICA_VERSION_HEADER] as string | undefined);
        if (response.status !== 200 || version === undefined) continue;
        const contentType = response.headers['content-type'] ?? 'application/octet-stream';
        if (await this.keep(path, logicalUrl, Buffer.from(response.body), contentType, version)) this.counters.revalidationUpdates += 1;
        return;
      } catch {
        // this holder is down: ask the next
      }
    }
  }
}

/** Where a holder serves its content to peers: its origin + the peer content path + its own path. */
function contentUrl(holderPhysicalUrl: string): string {
  const url = new URL(holderPhysicalUrl);
  return `${url.origin}${PEER_CONTENT_PATH}${url.pathname}`;
}
