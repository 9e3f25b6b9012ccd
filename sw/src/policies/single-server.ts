/**
 * "Single server" (paper Section 6.1): every request goes to one replica, as on a site
 * without replication. The replica is the n-th server holding the resource in the origin's
 * order of preference (the replication directory's order, e.g. A, B, C). No failover: when
 * that server is down the request fails, as it would without Web++.
 */
import type { ReplicaPolicy } from '../policy.js';
import { NO_TIMEOUT_MS } from './baseline.js';

/** `position` is 1-based: 1 is the first server of the directory entry. */
export function singleServerPolicy(position: number): ReplicaPolicy {
  if (!Number.isInteger(position) || position < 1) throw new RangeError(`position must be an integer ≥ 1 (got ${position})`);
  return {
    name: `single-${position}`,
    plan: ({ candidates }) => {
      const server = candidates[position - 1];
      // A resource with fewer replicas has no such server: fail like a missing one.
      return server === undefined ? [] : [{ server, timeoutMs: NO_TIMEOUT_MS, reason: `single-server-${position}` }];
    },
  };
}
