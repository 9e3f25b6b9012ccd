/**
 * "Optimal" (paper Section 6.1): every replica at once, the first answer wins, the others
 * are cancelled. It is the bound a replica-selection policy is measured against, paid for
 * with one request per replica. In the worker "the first answer" is the first usable
 * response head: the attempt runner serves the first response that arrives and streams its
 * body (the simulator's `optimal` waits for the first complete body instead).
 */
import type { ReplicaPolicy } from '../policy.js';
import { NO_TIMEOUT_MS } from './baseline.js';

export function optimalPolicy(): ReplicaPolicy {
  return {
    name: 'optimal',
    plan: ({ candidates }) => candidates.map((server) => ({ server, timeoutMs: NO_TIMEOUT_MS, reason: 'all-replicas', hedgeAfterMs: 0 })),
  };
}
