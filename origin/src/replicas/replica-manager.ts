/**
 * Replica management (paper Section 5.2, Figure 8): creation (POST), update (PUT) and
 * deletion (DELETE) of this server's replica of a logical URL, wrapped in user-supplied
 * pre-filters (which may veto) and post-filters.
 *
 * - create: store the content, add this server's physical URL to the directory, persist
 *   the directory, and let peer sync propagate the change.
 * - update: store a new version (if this server holds a replica) and push it to every
 *   other server the directory lists for the logical URL. Versions are ordered
 *   (replica-version.ts) and a server keeps only the newest, so pushes that cross or
 *   arrive late can never roll content back. Failed pushes are retried with each
 *   anti-entropy round.
 * - delete: remove this server's replica and its directory pair, persist, propagate; the
 *   deleted version is kept as a tombstone (tombstones.ts).
 * - receive (a peer's push): accepted only when newer than both the stored version and the
 *   tombstone, and only when the directory lists this server as a replica of the pushed
 *   logical URL; so a captured push replayed after a DELETE, or to a server that never
 *   held the replica, changes nothing.
 * - converge: a POST issues a version too; of the versions of one logical URL the greatest
 *   wins on every holder, as for a PUT (replica-reconciler.ts, each syncIntervalMs).
 * Operations on one path run one at a time (KeyedMutex); a veto or an error leaves
 * everything as it was.
 */
import { createHash } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { ReplicationDirectory } from '../directory/replication-directory.js';
import { canonicalUrl } from '@webpp/core';
import { WEBPP_ERR_NOT_A_REPLICA, WEBPP_ERR_PREFIX_ENTRY, WEBPP_ERR_REPLICA_EXISTS, WEBPP_ERR_REPLICA_NOT_FOUND, WEBPP_ERR_STALE_VERSION } from '../errors.js';
import type { ReplicaOperation, ResolvedOptions } from '../options.js';
import { KeyedMutex } from './keyed-mutex.js';
import { replicaEtag, type ReplicaStore, type StoredReplica } from './replica-store.js';
import { compareVersions, formatVersion, nextVersion, type ReplicaVersion } from './replica-version.js';
import type { Tombstones } from './tombstones.js';
import { ReplicaReconciler } from './replica-reconciler.js';
import { runPostFilters, runPreFilters } from './replica-filters.js';
import { ReplicaPushes } from './replica-push.js';
import { newest, replicaOperation, type CreateResult, type OperationContext, type UpdateResult } from './replica-operation.js';

export interface ReplicaManagerDependencies {
  /** Its slice of the options, and those of the push and the reconciler it drives. */
  options: Pick<ResolvedOptions, 'publicUrl' | 'logicalOrigin' | 'syncIntervalMs' | 'preFilters' | 'postFilters' | 'clusterSecret' | 'peerTimeoutMs' | 'maxReplicaBytes'>;
  directory: ReplicationDirectory;
  flushDirectory: () => Promise<void>;
  store: ReplicaStore;
  tombstones: Tombstones;
  log: FastifyBaseLogger;
  clock?: () => number;
}

export class ReplicaManager {
  private readonly mutex = new KeyedMutex();
  private readonly clock: () => number;
  /** Pushes to the other holders, and the retries of those that failed (replica-push.ts). */
  private readonly pushes: ReplicaPushes;
  /**
   * timeMs of the last version this server issued. Versions it issues are strictly
   * increasing, so two writes never share one: two PUTs on a server that holds no replica
   * (nothing stored to order them by) within one millisecond used to get the same version,
   * and peers answered the second one's push 409 "already have it" with other bytes.
   */
  private lastIssuedMs = 0;
  private retryTimer: ReturnType<typeof setInterval> | undefined;

  private readonly reconciler: ReplicaReconciler;

  constructor(private readonly deps: ReplicaManagerDependencies) {
    this.clock = deps.clock ?? Date.now;
    this.pushes = new ReplicaPushes(deps);
    this.reconciler = new ReplicaReconciler({
      options: deps.options,
      directory: deps.directory,
      store: deps.store,
      log: deps.log,
      target: {
        physicalUrlOf: (path) => this.physicalUrlOf(path),
        pushTo: async (physicalUrl, replica) => {
          const release = deps.store.hold(replica);
          let content: Buffer;
          try {
            content = await deps.store.readAll(replica);
          } finally {
            release();
          }
          const { logicalUrl, contentType, version } = replica;
          return (await this.pushes.push({ physicalUrl, logicalUrl, content, contentType, version, attempts: 0 })).ok;
        },
        adopt: async (replica, content, contentType, version) => {
          await this.receive(replica.path, content, contentType, version, replica.logicalUrl, { source: 'peer' });
        },
      },
    });
  }

  logicalUrlOf(path: string): string {
    return canonicalUrl(this.deps.options.logicalOrigin + path) as string;
  }

  physicalUrlOf(path: string): string {
    return canonicalUrl(this.deps.options.publicUrl + path) as string;
  }

  get(path: string): StoredReplica | undefined {
    return this.deps.store.get(path);
  }

  /** POST: create this server's replica of the logical URL at `path`. */
  async create(path: string, content: Buffer, contentType: string, context: OperationContext): Promise<CreateResult> {
    const operation = this.operation('create', path, context, content, contentType);
    return this.mutex.run(path, async () => {
      await this.runPreFilters(operation);
      const existing = this.deps.store.get(path);
      if (existing !== undefined) throw new WEBPP_ERR_REPLICA_EXISTS(operation.logicalUrl);
      const replica = await this.deps.store.put(path, content, {
        logicalUrl: operation.logicalUrl,
        contentType,
        version: this.issueVersion(this.deps.tombstones.get(path, this.clock())),
        nowMs: this.clock(),
      });
      this.deps.directory.addReplica(operation.logicalUrl, operation.physicalUrl);
      await this.deps.flushDirectory();
      await this.runPostFilters(operation, { stored: true, version: formatVersion(replica.version), etag: replicaEtag(replica) });
      return { logicalUrl: operation.logicalUrl, physicalUrl: operation.physicalUrl, replica };
    });
  }

  /** PUT: new content for every replica of the logical URL at `path`. */
  async update(path: string, content: Buffer, contentType: string, context: OperationContext): Promise<UpdateResult> {
    const operation = this.operation('update', path, context, content, contentType);
    const { version, stored, etag, targets } = await this.mutex.run(path, async () => {
      await this.runPreFilters(operation);
      const holders = this.deps.directory.lookup(operation.logicalUrl)?.physicalUrls ?? [];
      const existing = this.deps.store.get(path);
      const holdsHere = existing !== undefined || holders.includes(operation.physicalUrl);
      const others = holders.filter((physical) => physical !== operation.physicalUrl);
      if (!holdsHere && others.length === 0) throw new WEBPP_ERR_REPLICA_NOT_FOUND(operation.logicalUrl);
      const version = this.issueVersion(newest(existing?.version, this.deps.tombstones.get(path, this.clock())));
      let etag = `"sha256-${createHash('sha256').update(content).digest('base64url')}"`;
      if (holdsHere) {
        const replica = await this.deps.store.put(path, content, {
          logicalUrl: operation.logicalUrl,
          contentType,
          version,
          nowMs: this.clock(),
        });
        etag = replicaEtag(replica);
      }
      return { version, stored: holdsHere, etag, targets: others };
    });
    const pushes = await Promise.all(
      targets.map((physicalUrl) =>
        this.pushes.push({ physicalUrl, logicalUrl: operation.logicalUrl, content, contentType, version, attempts: 0 }),
      ),
    );
    await this.runPostFilters(operation, { stored, version: formatVersion(version), etag, pushes });
    return { logicalUrl: operation.logicalUrl, version: formatVersion(version), etag, stored, pushes };
  }

  /** DELETE: remove this server's replica and its directory pair. */
  async remove(path: string, context: OperationContext): Promise<{ logicalUrl: string; physicalUrl: string }> {
    const operation = this.operation('delete', path, context);
    return this.mutex.run(path, async () => {
      await this.runPreFilters(operation);
      const stored = this.deps.store.get(path) !== undefined;
      const listed = this.deps.directory.has(operation.logicalUrl, operation.physicalUrl);
      if (!stored && !listed) {
        const match = this.deps.directory.lookup(operation.logicalUrl);
        if (match?.binding.prefix === true && match.physicalUrls.includes(operation.physicalUrl)) {
          throw new WEBPP_ERR_PREFIX_ENTRY(operation.logicalUrl, `${match.binding.logical}*`);
        }
        throw new WEBPP_ERR_REPLICA_NOT_FOUND(operation.logicalUrl);
      }
      // The tombstone first: once any part of the deletion is visible, older pushes are refused.
      await this.deps.tombstones.record(path, this.deps.store.get(path)?.version, this.deps.options.publicUrl, this.clock());
      if (listed) {
        this.deps.directory.removeReplica(operation.logicalUrl, operation.physicalUrl);
        await this.deps.flushDirectory();
      }
      if (stored) await this.deps.store.delete(path);
      await this.runPostFilters(operation, { stored });
      return { logicalUrl: operation.logicalUrl, physicalUrl: operation.physicalUrl };
    });
  }

  /** A peer pushes a new version of the replica this server holds at `path`. */
  async receive(
    path: string,
    content: Buffer,
    contentType: string,
    version: ReplicaVersion,
    logicalUrl: string,
    context: OperationContext,
  ): Promise<StoredReplica> {
    const operation = { ...this.operation('update', path, context, content, contentType), logicalUrl };
    return this.mutex.run(path, async () => {
      await this.runPreFilters(operation);
      const existing = this.deps.store.get(path);
      const floor = newest(existing?.version, this.deps.tombstones.get(path, this.clock()));
      if (floor !== undefined && compareVersions(version, floor) <= 0) {
        throw new WEBPP_ERR_STALE_VERSION(formatVersion(version), logicalUrl, formatVersion(floor));
      }
      if (!this.isListed(logicalUrl, path)) throw new WEBPP_ERR_NOT_A_REPLICA(operation.physicalUrl, logicalUrl);
      const replica = await this.deps.store.put(path, content, { logicalUrl, contentType, version, nowMs: this.clock() });
      await this.runPostFilters(operation, { stored: true, version: formatVersion(version), etag: replicaEtag(replica) });
      return replica;
    });
  }

  /** Whether the directory lists this server's physical URL for `path` as a replica of `logicalUrl`. */
  private isListed(logicalUrl: string, path: string): boolean {
    return this.deps.directory.lookup(logicalUrl)?.physicalUrls.includes(this.physicalUrlOf(path)) === true;
  }

  /** Starts retrying failed update pushes, and reconciling the holders' versions, every syncIntervalMs, until stop(). */
  start(): void {
    if (this.retryTimer !== undefined) return;
    this.retryTimer = setInterval(() => {
      void this.retryPendingPushes();
      void this.reconciler.run();
    }, this.deps.options.syncIntervalMs);
    this.retryTimer.unref();
  }

  /** Stops the timer; resolves once a reconciliation round under way has finished (nothing is stored after). */
  async stop(): Promise<void> {
    clearInterval(this.retryTimer);
    this.retryTimer = undefined;
    await this.reconciler.idle();
  }

  /** One reconciliation round now (syncNow). */
  reconcile(): Promise<void> {
    return this.reconciler.run();
  }

  /** Retries failed update pushes once each (every syncIntervalMs, and on syncNow); targets no longer listed are dropped. */
  retryPendingPushes(): Promise<void> {
    return this.pushes.retryPending();
  }

  /** Pushes waiting for a retry, including those being retried now. */
  get pendingPushes(): number {
    return this.pushes.pending;
  }

  /** A new version of this server's, greater than `previous` and than every version it issued before. */
  private issueVersion(previous: ReplicaVersion | undefined): ReplicaVersion {
    const version = nextVersion(previous, this.deps.options.publicUrl, Math.max(this.clock(), this.lastIssuedMs + 1));
    this.lastIssuedMs = version.timeMs;
    return version;
  }

  private operation(kind: ReplicaOperation['operation'], path: string, context: OperationContext, content?: Buffer, contentType?: string): ReplicaOperation {
    return replicaOperation(kind, { path, logicalUrl: this.logicalUrlOf(path), physicalUrl: this.physicalUrlOf(path) }, context, content, contentType);
  }

  private runPreFilters(operation: ReplicaOperation): Promise<void> {
    return runPreFilters(this.deps.options.preFilters, operation);
  }

  private runPostFilters(operation: ReplicaOperation, outcome: Parameters<typeof runPostFilters>[2]): Promise<void> {
    return runPostFilters(this.deps.options.postFilters, operation, outcome, this.deps.log);
  }
}
