/**
 * "Round-robin": the replicas in turn, like DNS rotation, no failover. One turn counter per
 * worker, so every tab of the site (and every request) takes the next replica.
 */
import type { ReplicaPolicy } from '../policy.js';
import { NO_TIMEOUT_MS } from './baseline.js';

export function roundRobinPolicy(): ReplicaPolicy {
  let turn = 0;
  return {
    name: 'round-robin',
    plan: ({ candidates }) => {
      if (candidates.length === 0) return [];
      const server = candidates[turn % candidates.length]!;
      turn = (turn + 1) % 1_000_000_007;
      return [{ server, timeoutMs: NO_TIMEOUT_MS, reason: 'round-robin' }];
    },
  };
}
