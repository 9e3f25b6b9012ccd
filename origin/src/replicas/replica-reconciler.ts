/**
 * Convergence of the replicas of one logical URL (issue 25 §10). A POST creates this
 * server's replica with a version of its own (replica-version.ts) while another holder may
 * hold other bytes under another version — three POSTs of different bodies to a, b and c
 * left each serving its own. The rule is the PUT's: of the versions of one logical URL, the
 * greatest wins on every holder. Every syncIntervalMs, for each replica this server stores
 * and each other holder the directory lists for its logical URL, not yet brought to this
 * version: a signed conditional GET of the holder's copy (peer/content, If-None-Match our
 * entity tag) —
 *   304, same bytes: done;
 *   200 with a greater version: its bytes are stored here (as a peer's push would be);
 *   200 with a smaller version, or 404: ours is pushed there (as a PUT pushes);
 *   anything else: tried again next round.
 * Every holder runs the same rule, so once the directory has propagated, the greatest
 * version reaches every holder whatever the order of the writes (a holder that answers
 * with a greater version than both pushes its own in its round). At most
 * MAX_CHECKS_PER_ROUND checks per round, so a restart (nothing known) spreads its checks.
 * Automatic copies placed by load-driven replication are left out, on either side: they
 * follow the copy they were taken from by their own revalidation (lazy/lazy-replicas.ts).
 */
import type { FastifyBaseLogger } from 'fastify';
import type { ReplicationDirectory } from '../directory/replication-directory.js';
import type { ResolvedOptions } from '../options.js';
import { clusterRequest } from '../sync/cluster-client.js';
import { PEER_CONTENT_PATH } from '../routes/peer-content.js';
import { replicaEtag, type ReplicaStore, type StoredReplica } from './replica-store.js';
import { compareVersions, formatVersion, parseVersion, REPLICA_VERSION_HEADER, type ReplicaVersion } from './replica-version.js';

const MAX_CHECKS_PER_ROUND = 32;

interface ReconcilerTarget {
  /** Pushes `replica`'s bytes to `physicalUrl` as a PUT does; true when the holder has it (or newer). */
  pushTo(physicalUrl: string, replica: StoredReplica): Promise<boolean>;
  /** Stores a holder's greater version here, as a peer's push (refused when not newer, or not listed). */
  adopt(replica: StoredReplica, content: Buffer, contentType: string, version: ReplicaVersion): Promise<void>;
  physicalUrlOf(path: string): string;
}

export interface ReplicaReconcilerDependencies {
  options: Pick<ResolvedOptions, 'clusterSecret' | 'peerTimeoutMs' | 'maxReplicaBytes'>;
  directory: ReplicationDirectory;
  store: ReplicaStore;
  target: ReconcilerTarget;
  log: FastifyBaseLogger;
}

export class ReplicaReconciler {
  /** The version each (holder, path) was last found at or brought to ("holder\npath" → version). */
  private readonly settled = new Map<string, string>();
  private round: Promise<void> | undefined;

  constructor(private readonly deps: ReplicaReconcilerDependencies) {}

  /** One round (skipped while one is running). Never rejects. */
  async run(): Promise<void> {
    if (this.round !== undefined) return this.round;
    this.round = this.check().catch((error: unknown) => this.deps.log.warn({ err: error }, 'webpp replica reconciliation round failed')).finally(() => {
      this.round = undefined;
    });
    return this.round;
  }

  /** Resolves once no round is running. */
  async idle(): Promise<void> {
    await this.round;
  }

  private async check(): Promise<void> {
    if (this.deps.options.clusterSecret === undefined) return;
    const live = new Set<string>();
    const due: { replica: StoredReplica; holder: string; key: string }[] = [];
    const { directory } = this.deps;
    for (const replica of this.deps.store.list()) {
      const self = this.deps.target.physicalUrlOf(replica.path);
      // Automatic copies (load-driven replication) follow their source by their own revalidation.
      if (directory.placement(replica.logicalUrl, self) !== undefined) continue;
      for (const holder of directory.lookup(replica.logicalUrl)?.physicalUrls ?? []) {
        if (holder === self || directory.placement(replica.logicalUrl, holder) !== undefined) continue;
        const key = `${holder}\n${replica.path}`;
        live.add(key);
        if (this.settled.get(key) !== formatVersion(replica.version)) due.push({ replica, holder, key });
      }
    }
    for (const key of this.settled.keys()) if (!live.has(key)) this.settled.delete(key);
    for (const { replica, holder, key } of due.slice(0, MAX_CHECKS_PER_ROUND)) {
      if (await this.reconcile(replica, holder)) this.settled.set(key, formatVersion(replica.version));
    }
  }

  /** Brings `holder` and this server to the greater of their versions; true when done. */
  private async reconcile(replica: StoredReplica, holder: string): Promise<boolean> {
    const target = new URL(holder);
    let response;
    try {
      response = await clusterRequest(this.deps.options.clusterSecret as string, `${target.origin}${PEER_CONTENT_PATH}${target.pathname}`, {
        method: 'GET',
        headers: { 'if-none-match': replicaEtag(replica) },
        timeoutMs: this.deps.options.peerTimeoutMs,
        maxResponseBytes: this.deps.options.maxReplicaBytes,
      });
    } catch {
      return false;
    }
    if (response.status === 304) return true;
    if (response.status === 404) return this.deps.target.pushTo(holder, replica);
    if (response.status !== 200) return false;
    const header = response.headers[REPLICA_VERSION_HEADER];
    const theirs = parseVersion(Array.isArray(header) ? header[0] : header);
    if (theirs === undefined) return false;
    const order = compareVersions(theirs, replica.version);
    if (order < 0) return this.deps.target.pushTo(holder, replica);
    if (order > 0) {
      const contentType = String(response.headers['content-type'] ?? 'application/octet-stream');
      await this.deps.target.adopt(replica, Buffer.from(response.body), contentType, theirs).catch((error: unknown) => {
        this.deps.log.warn({ err: error, holder, path: replica.path }, 'webpp replica reconciliation: a newer version was not stored');
      });
      // This server's version changed (or the holder is not a replica here): the next round looks again.
      return false;
    }
    return true; // the same version: the same bytes
  }
}
