/**
 * Pushes of a replica's new version to the other servers that hold it (replica-manager.ts's
 * update, and the reconciler), and the queue of the pushes that failed: each is retried
 * once per round (every syncIntervalMs, and on syncNow) while the directory still lists its
 * target, at most MAX_PUSH_ATTEMPTS times; per target only the newest version waits, and the
 * queue holds at most MAX_RETRY_BYTES of content.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { ReplicationDirectory } from '../directory/replication-directory.js';
import type { PushOutcome, ResolvedOptions } from '../options.js';
import { clusterRequest } from '../sync/cluster-client.js';
import { compareVersions, formatVersion, REPLICA_VERSION_HEADER, type ReplicaVersion } from './replica-version.js';
import { LOGICAL_URL_HEADER, PEER_REPLICAS_PATH } from './replica-protocol.js';

const MAX_PUSH_ATTEMPTS = 20;
const MAX_RETRY_BYTES = 64 * 1024 * 1024;

export interface PendingPush {
  physicalUrl: string;
  logicalUrl: string;
  content: Buffer;
  contentType: string;
  version: ReplicaVersion;
  attempts: number;
}

export interface ReplicaPushDependencies {
  options: Pick<ResolvedOptions, 'clusterSecret' | 'peerTimeoutMs'>;
  directory: ReplicationDirectory;
  log: FastifyBaseLogger;
}

export class ReplicaPushes {
  /** Update pushes that failed, by target physical URL; only the newest version is kept. */
  private readonly retries = new Map<string, PendingPush>();
  private retryRound: Promise<void> | undefined;
  private retriesInFlight = 0;

  constructor(private readonly deps: ReplicaPushDependencies) {}

  /** Pushes waiting for a retry, including those being retried now. */
  get pending(): number {
    return this.retries.size + this.retriesInFlight;
  }

  /** Retries failed update pushes once each; targets no longer listed are dropped. */
  async retryPending(): Promise<void> {
    // One round at a time: a caller (syncNow) that meets a round in flight waits for it,
    // then runs its own, so that it returns with every push tried against the directory as
    // it is now.
    while (this.retryRound !== undefined) await this.retryRound;
    this.retryRound = this.runRetryRound().finally(() => {
      this.retryRound = undefined;
    });
    await this.retryRound;
  }

  private async runRetryRound(): Promise<void> {
    const pending = [...this.retries.values()].filter((push) => this.stillListed(push));
    this.retries.clear();
    this.retriesInFlight = pending.length;
    await Promise.all(
      pending.map(async (push) => {
        try {
          await this.push({ ...push, attempts: push.attempts });
        } finally {
          this.retriesInFlight -= 1;
        }
      }),
    );
  }

  /** A push is only worth retrying while the directory still lists its target for the URL. */
  private stillListed(push: PendingPush): boolean {
    return this.deps.directory.lookup(push.logicalUrl)?.physicalUrls.includes(push.physicalUrl) === true;
  }

  /** One signed PUT to the target; a failure that may pass (no answer, 5xx, not listed there yet) is queued for a retry. */
  async push(push: PendingPush): Promise<PushOutcome> {
    const secret = this.deps.options.clusterSecret;
    const target = new URL(push.physicalUrl);
    const outcome = (status: number, error?: string): PushOutcome =>
      error === undefined ? { physicalUrl: push.physicalUrl, status, ok: true } : { physicalUrl: push.physicalUrl, status, ok: false, error };
    if (secret === undefined) return outcome(0, 'no clusterSecret configured: cannot push to other servers');
    let result: PushOutcome;
    try {
      const response = await clusterRequest(secret, `${target.origin}${PEER_REPLICAS_PATH}${target.pathname}`, {
        method: 'PUT',
        body: push.content,
        headers: {
          'content-type': push.contentType,
          [REPLICA_VERSION_HEADER]: formatVersion(push.version),
          [LOGICAL_URL_HEADER]: push.logicalUrl,
        },
        timeoutMs: this.deps.options.peerTimeoutMs,
      });
      // 409 STALE_VERSION means the peer already has this version or a newer one (or deleted
      // it later): the goal is met. 409 NOT_A_REPLICA means its directory does not list it
      // (yet): retried, since directory changes propagate.
      const text = new TextDecoder().decode(response.body);
      const ok = response.status === 200 || (response.status === 409 && errorCodeOf(text) !== 'WEBPP_ERR_NOT_A_REPLICA');
      result = ok ? outcome(response.status) : outcome(response.status, text.slice(0, 300));
    } catch (error) {
      result = outcome(0, (error as Error).message);
    }
    const notListedYet = result.status === 409 && !result.ok;
    const retryable = !result.ok && (result.status === 0 || result.status >= 500 || notListedYet);
    if (retryable) this.scheduleRetry(push);
    if (!result.ok) this.deps.log.warn({ target: push.physicalUrl, status: result.status, err: result.error }, 'webpp replica update push failed');
    return result;
  }

  private scheduleRetry(push: PendingPush): void {
    if (push.attempts + 1 >= MAX_PUSH_ATTEMPTS) {
      this.deps.log.error({ target: push.physicalUrl, version: formatVersion(push.version) }, 'webpp replica update push abandoned');
      return;
    }
    if (!this.stillListed(push)) return;
    const queued = this.retries.get(push.physicalUrl);
    if (queued !== undefined && compareVersions(queued.version, push.version) >= 0) return;
    let bytes = push.content.byteLength;
    for (const other of this.retries.values()) bytes += other.content.byteLength;
    if (bytes > MAX_RETRY_BYTES) {
      this.deps.log.error({ target: push.physicalUrl }, 'webpp replica update push dropped: retry queue full');
      return;
    }
    this.retries.set(push.physicalUrl, { ...push, attempts: push.attempts + 1 });
  }
}

function errorCodeOf(body: string): string | undefined {
  try {
    const code = (JSON.parse(body) as { code?: unknown }).code;
    return typeof code === 'string' ? code : undefined;
  } catch {
    return undefined;
  }
}
