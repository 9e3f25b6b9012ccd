/**
 * The equivalent-server set against herding (issue 13; Fei et al., INFOCOM 1998,
 * Section 4.3, "Avoiding Oscillations"): instead of every client taking the single best
 * server — and the herd moving from server to server as each saturates in turn — a request
 * picks at random among the servers whose estimate is close to the best. Fei's algorithm,
 * run on every plan (i.e. after every push or sample):
 *
 *   ES = ES ∪ {server with the lowest estimate}; R_top = that estimate
 *   for j ∈ ES:             if (R_j − R_top) / R_top > τ_leave  then ES = ES − {j}
 *   for j ∉ ES (not just removed): if (R_j − R_top) / R_top ≤ τ_join then ES = ES ∪ {j}
 *
 * with relative thresholds (Fei's are differences; herd-options.ts says why) and
 * τ_leave ≥ τ_join: the hysteresis keeps the set's membership stable.
 */
import type { ServerId } from '../../types.js';
import type { HerdOptions } from './herd-options.js';

export interface Estimated {
  server: ServerId;
  /** The policy's expected time of this request on this server (ms). */
  expectedMs: number;
}

export class EquivalentSet {
  private readonly members = new Set<ServerId>();

  has(server: ServerId): boolean {
    return this.members.has(server);
  }

  /**
   * Updates the membership of the servers in `ranked` (the measured, available candidates of
   * one request) and returns the members among them. Servers not in `ranked` keep theirs.
   */
  update(ranked: readonly Estimated[], options: HerdOptions): Estimated[] {
    if (ranked.length === 0) return [];
    let top = ranked[0] as Estimated;
    for (const entry of ranked) if (entry.expectedMs < top.expectedMs) top = entry;
    this.members.add(top.server);
    const topMs = Math.max(Number.MIN_VALUE, top.expectedMs);
    const behind = (entry: Estimated): number => (entry.expectedMs - topMs) / topMs;
    const removed = new Set<ServerId>();
    for (const entry of ranked) {
      if (this.members.has(entry.server) && behind(entry) > options.equivalentSetLeaveRatio) {
        this.members.delete(entry.server);
        removed.add(entry.server);
      }
    }
    for (const entry of ranked) {
      if (!this.members.has(entry.server) && !removed.has(entry.server) && behind(entry) <= options.equivalentSetJoinRatio) {
        this.members.add(entry.server);
      }
    }
    return ranked.filter((entry) => this.members.has(entry.server));
  }

  /** Forgets a server (it failed: it rejoins by its estimate once it is back). */
  remove(server: ServerId): void {
    this.members.delete(server);
  }
}
