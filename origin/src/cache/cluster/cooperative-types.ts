/**
 * What the cooperative cache (cooperative-cache.ts) is built with: the local memory cache it
 * joins to the cluster, and its settings (the cluster's, and GOS's constants from
 * options/internals.ts, set by cluster-plugin.ts).
 */
import type { LivenessSource } from './membership.js';
import type { InvalidationTarget } from '../types.js';
import type { CacheObject } from './peer-protocol.js';

/** What the cluster layer needs of this server's memory cache. */
export interface LocalCache {
  /** The fresh copy in memory, if any, without counting a hit. */
  peek(path: string): CacheObject | undefined;
  /** Offers a copy; the replacement policy decides (true: kept). */
  offer(object: CacheObject): boolean;
  /** Removes copies: one path, or every path under a prefix. Returns how many. */
  remove(target: InvalidationTarget): number;
  /** The local cache's own counters (local hits, bytes from memory, evictions…), for the cluster totals. */
  counters(): Record<string, number>;
}

export type { InvalidationTarget };

export interface CooperativeCacheOptions {
  self: string;
  peers: readonly string[];
  secret: string;
  peerTimeoutMs: number;
  maxClockSkewMs: number;
  reportIntervalMs: number;
  reportThreshold: number;
  agingIntervalMs: number;
  /** Share of the tracked objects that is hot (hot-threshold.ts). */
  hotShare: number;
  hotCopies: number;
  recirculation: number;
  maxObjectBytes: number;
  /** Largest number of pushes (fills, second chances) in flight at once; more are skipped. */
  maxPushesInFlight: number;
  liveness?: LivenessSource;
  log: { debug(object: object, message: string): void; warn(object: object, message: string): void };
  now?: () => number;
  random?: () => number;
}

