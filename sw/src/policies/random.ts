/**
 * "Random": a uniformly random replica per request, no failover (a client that spreads its
 * load blindly, the baseline of the paper's reference [35]).
 */
import type { RandomSource } from '@webpp/core';
import type { ReplicaPolicy } from '../policy.js';
import { NO_TIMEOUT_MS } from './baseline.js';

export function randomPolicy(random: RandomSource): ReplicaPolicy {
  return {
    name: 'random',
    plan: ({ candidates }) => {
      if (candidates.length === 0) return [];
      const server = candidates[Math.min(candidates.length - 1, Math.floor(random() * candidates.length))]!;
      return [{ server, timeoutMs: NO_TIMEOUT_MS, reason: 'random' }];
    },
  };
}
