/**
 * Load-driven replication on one server (issue 14; DCWS, Baker and Moon 1998): every T_st
 * it recalls the automatic replicas it placed on co-ops that are down (Section 4.5), then,
 * when enabled, takes back at most one replica (select-withdrawal.ts) and places at most
 * one (select-migration.ts, Algorithm 1). Placing a replica is adding a directory pair with
 * an automatic marker: the directory propagates it, and the co-op fetches the content on
 * its first request (lazy replication). The home's own copy always stays.
 */
import { canonicalUrl } from '@webpp/core';
import { DecisionLog, type Decision, type DecisionKind } from './decision-log.js';
import { eligibility, type Eligibility } from './eligibility.js';
import { clusterMean, selectMigration, type CoopView } from './select-migration.js';
import { selectWithdrawal, type PlacedReplica } from './select-withdrawal.js';
import { replicaLimitOf } from './coop-replica-limit.js';
import type { LoadTable } from './load-table.js';
import type { ReplicationDirectory } from '../directory/replication-directory.js';
import type { ResolvedOptions } from '../options.js';
import type { LoadRecord } from '../sync/load-record.js';
import type { PeerState } from '../sync/peer-state.js';

interface ControllerLogger {
  info(object: object, message: string): void;
  debug(object: object, message: string): void;
}

export interface ReplicationControllerOptions {
  options: Pick<
    ResolvedOptions,
    | 'publicUrl'
    | 'logicalOrigin'
    | 'scriptPath'
    | 'workerPath'
    | 'autoReplicate'
    | 'autoReplicatePrefixes'
    | 'autoReplicatePinned'
    | 'autoReplicatePinPages'
    | 'maxReplicaBytes'
    | 'replicationCoopIntervalMs'
    | 'replicationHitThreshold'
    | 'replicationHomeMs'
    | 'replicationIntervalMs'
    | 'replicationLoadMetric'
    | 'replicationMaxBytesPerCoop'
    | 'replicationMaxPerCoop'
    | 'replicationMinLoad'
    | 'replicationOverloadRatio'
    | 'replicationPeerMaxAgeMs'
  >;
  directory: ReplicationDirectory;
  loadTable: LoadTable;
  peerState: PeerState;
  log: ControllerLogger;
  clock?: () => number;
}

export interface ReplicationStats {
  enabled: boolean;
  isHome: boolean;
  metric: ResolvedOptions['replicationLoadMetric'];
  placements: number;
  withdrawals: number;
  recalls: number;
  flaps: number;
  /** Automatic replicas this server placed that are in the directory now. */
  automaticReplicas: number;
  lastReason: string;
  decisions: Decision[];
  /** The load figures the last decision used (this server first). */
  cluster: { server: string; load: number; live: boolean; recordAgeMs: number | undefined }[];
}

function loadOf(record: Pick<LoadRecord, 'requestsPerSecond' | 'bytesPerSecond' | 'utilisation'>, metric: ResolvedOptions['replicationLoadMetric']): number {
  return metric === 'requests' ? record.requestsPerSecond : metric === 'bytes' ? record.bytesPerSecond : record.utilisation;
}

export class ReplicationController {
  enabled: boolean;
  private readonly clock: () => number;
  private readonly decisionLog: DecisionLog;
  private readonly rules: Eligibility;
  private timer: NodeJS.Timeout | undefined;
  private lastReason = 'not run yet';
  private lastCluster: ReplicationStats['cluster'] = [];
  /** Rate limit of this home: at most one placement and one withdrawal per T_st. */
  private lastPlacedAtMs = Number.NEGATIVE_INFINITY;
  private lastWithdrawnAtMs = Number.NEGATIVE_INFINITY;

  constructor(private readonly deps: ReplicationControllerOptions) {
    this.clock = deps.clock ?? Date.now;
    this.enabled = deps.options.autoReplicate;
    this.decisionLog = new DecisionLog(deps.options.replicationHomeMs);
    this.rules = eligibility(deps.options, deps.directory);
    deps.peerState.onPeerDown(() => this.recallFromDown());
  }

  start(): void {
    if (this.timer !== undefined) return;
    this.timer = setInterval(() => this.decide(), this.deps.options.replicationIntervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One round (what the timer runs every T_st). */
  decide(): void {
    this.recallFromDown();
    if (!this.enabled) {
      this.lastReason = 'automatic replication is off on this server';
      return;
    }
    if (!this.rules.isHome) {
      this.lastReason = 'not a home server (its logicalOrigin is another server)';
      return;
    }
    const { options, loadTable, peerState } = this.deps;
    const nowMs = this.clock();
    const metric = options.replicationLoadMetric;
    const selfLoad = loadOf(loadTable.ownLoad(0), metric);
    const coops = this.coopViews(nowMs);
    const mean = clusterMean(selfLoad, coops);
    this.lastCluster = [
      { server: options.publicUrl, load: selfLoad, live: true, recordAgeMs: 0 },
      ...peerState.peers.map((peer) => {
        const held = peerState.record(peer);
        return { server: peer, load: held === undefined ? 0 : loadOf(held.record, metric), live: peerState.isLive(peer), recordAgeMs: held === undefined ? undefined : nowMs - held.receivedAtMs };
      }),
    ];
    const withdrawal = selectWithdrawal({
      nowMs,
      selfLoad,
      mean,
      overloadRatio: options.replicationOverloadRatio,
      homeMs: options.replicationHomeMs,
      coopLoads: new Map(coops.map((coop) => [coop.server, coop.load])),
      placed: this.placedHere(),
      carried: (path, coop) => this.carried(path, coop, metric),
    });
    const period = options.replicationIntervalMs;
    if (withdrawal.kind === 'withdraw' && nowMs - this.lastWithdrawnAtMs >= period) {
      this.lastWithdrawnAtMs = nowMs;
      this.remove('withdraw', withdrawal.replica, withdrawal.reason, nowMs);
    }
    if (nowMs - this.lastPlacedAtMs < period) {
      this.lastReason = 'one placement per T_st: waiting';
      return;
    }
    const migration = selectMigration({
      nowMs,
      selfLoad,
      peers: coops,
      resources: loadTable.resources(),
      policy: {
        overloadRatio: options.replicationOverloadRatio,
        minLoad: options.replicationMinLoad,
        hitThreshold: options.replicationHitThreshold,
        coopIntervalMs: options.replicationCoopIntervalMs,
        homeMs: options.replicationHomeMs,
        maxPerCoop: options.replicationMaxPerCoop,
        maxBytesPerCoop: options.replicationMaxBytesPerCoop,
      },
      eligible: (path) => this.rules.eligible(path),
      holders: (path) => this.holders(path),
      lastRemovedAtMs: (path, coop) => this.decisionLog.lastRemovedAtMs(this.rules.logicalUrlOf(path) ?? path, coop),
    });
    if (migration.kind === 'place') {
      this.lastPlacedAtMs = nowMs;
      this.place(migration.path, migration.coop, migration.sizeBytes, migration.reason, nowMs);
    } else if (migration.reason !== this.lastReason) this.deps.log.debug({ reason: migration.reason }, 'webpp automatic replication: nothing to place');
    this.lastReason = migration.reason;
  }

  stats(): ReplicationStats {
    const { counts, flaps } = this.decisionLog;
    return {
      enabled: this.enabled,
      isHome: this.rules.isHome,
      metric: this.deps.options.replicationLoadMetric,
      placements: counts.place,
      withdrawals: counts.withdraw,
      recalls: counts.recall,
      flaps,
      automaticReplicas: this.placedHere().length,
      lastReason: this.lastReason,
      decisions: this.decisionLog.decisions(),
      cluster: this.lastCluster,
    };
  }

  /** Live peers with fresh records, with their automatic replicas counted across homes. */
  private coopViews(nowMs: number): CoopView[] {
    const { peerState, options, directory } = this.deps;
    const held = new Map<string, { count: number; bytes: number; lastAtMs: number }>();
    for (const { physical, placement } of directory.automaticReplicas()) {
      const coop = new URL(physical).origin;
      if (coop === placement.home) continue; // the home's own pair
      const entry = held.get(coop) ?? { count: 0, bytes: 0, lastAtMs: 0 };
      held.set(coop, { count: entry.count + 1, bytes: entry.bytes + placement.sizeBytes, lastAtMs: Math.max(entry.lastAtMs, placement.placedAtMs) });
    }
    return peerState.livePeers().flatMap((peer) => {
      const record = peerState.record(peer);
      if (record === undefined || nowMs - record.receivedAtMs > options.replicationPeerMaxAgeMs) return [];
      const entry = held.get(peer);
      return [{
        server: peer,
        load: loadOf(record.record, options.replicationLoadMetric),
        automaticCount: entry?.count ?? 0,
        automaticBytes: entry?.bytes ?? 0,
        lastAcceptedAtMs: entry?.lastAtMs ?? 0,
        maxReplicaBytes: replicaLimitOf(record.record, options.maxReplicaBytes),
      }];
    });
  }

  /** Automatic replicas this server placed on co-ops (its own home pairs excluded). */
  private placedHere(): PlacedReplica[] {
    const self = this.deps.options.publicUrl;
    return this.deps.directory.automaticReplicas().flatMap(({ logical, physical, placement }) => {
      const url = new URL(physical);
      if (placement.home !== self || url.origin === self) return [];
      return [{ logical, path: url.pathname + url.search, coop: url.origin, placedAtMs: placement.placedAtMs }];
    });
  }

  private holders(path: string): Set<string> {
    const logical = this.rules.logicalUrlOf(path);
    const physicals = logical === undefined ? [] : (this.deps.directory.lookup(logical)?.physicalUrls ?? []);
    return new Set([this.deps.options.publicUrl, ...physicals.map((physical) => new URL(physical).origin)]);
  }

  /** The load the co-op reports for `path`, in the metric's unit (per second over this server's window). */
  private carried(path: string, coop: string, metric: ResolvedOptions['replicationLoadMetric']): number {
    const row = this.deps.peerState.record(coop)?.record.hot.find((hot) => hot.path === path);
    if (row === undefined || metric === 'utilisation') return 0;
    return ((metric === 'requests' ? row.hits : row.bytes) * 1000) / this.deps.loadTable.windowMs;
  }

  private place(path: string, coop: string, sizeBytes: number, reason: string, nowMs: number): void {
    const { directory, options } = this.deps;
    const logical = this.rules.logicalUrlOf(path);
    const physical = canonicalUrl(coop + path);
    const home = canonicalUrl(options.publicUrl + path);
    if (logical === undefined || physical === undefined || home === undefined) return;
    const placement = { home: options.publicUrl, placedAtMs: nowMs, reason, sizeBytes };
    directory.doc.transact(() => {
      if (directory.lookup(logical) === undefined) directory.addReplica(logical, home, 'local', placement);
      directory.addReplica(logical, physical, 'local', placement);
    }, 'local');
    this.record('place', logical, coop, reason, nowMs);
  }

  /** Takes a replica back; the home's own marked pair goes too when nothing else is left. */
  private remove(kind: DecisionKind, replica: PlacedReplica, reason: string, nowMs: number): void {
    const { directory, options } = this.deps;
    const physical = canonicalUrl(replica.coop + replica.path);
    const home = canonicalUrl(options.publicUrl + replica.path);
    if (physical === undefined || home === undefined) return;
    const remove: [string, string][] = [[replica.logical, physical]];
    const left = (directory.lookup(replica.logical)?.physicalUrls ?? []).filter((url) => url !== physical);
    if (left.length === 1 && left[0] === home && directory.placement(replica.logical, home)?.home === options.publicUrl) remove.push([replica.logical, home]);
    directory.batch({ remove });
    this.record(kind, replica.logical, replica.coop, reason, nowMs);
  }

  /** Recalls every automatic replica this server placed on a co-op that is down. */
  private recallFromDown(): void {
    const { peerState } = this.deps;
    for (const replica of this.placedHere()) {
      if (peerState.peers.includes(replica.coop) && peerState.isLive(replica.coop)) continue;
      this.remove('recall', replica, `co-op ${replica.coop} is down (unanswered pings) or no longer a peer`, this.clock());
    }
  }

  private record(kind: DecisionKind, logical: string, coop: string, reason: string, atMs: number): void {
    this.decisionLog.add({ atMs, kind, logical, coop, reason });
    this.deps.log.info({ decision: kind, logical, coop, reason }, `webpp automatic replication: ${kind}`);
  }
}
