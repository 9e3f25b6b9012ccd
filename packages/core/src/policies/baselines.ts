/**
 * The evaluation baselines (paper Section 6.1): they model a browser *without* Web++, so
 * they never time out on their own (a browser waits until the page gives up), never fail
 * over and send no background requests. Each keeps a latency table only to show what it
 * saw (table-policy.ts); none plans by it.
 *
 *   single-server     every request to one replica (no replication)
 *   random            a uniformly random replica per request (the paper's reference [35])
 *   round-robin       the replicas in turn, like DNS rotation
 *   optimal           every replica at once, the first response head wins
 *   optimal-complete  every replica at once, the first complete body wins (Section 6.1 to the letter)
 */
import type { SelectionConfig, ServerId } from '../types.js';
import type { ClientPolicy, PlannedAttempt, PlanInput, PolicyDeps } from '../engine/policy-types.js';
import { newTable, tablePolicyParts } from './table-policy.js';
import type { TablePolicy } from './table-policy.js';

/** The longest timer a browser accepts (2^31 − 1 ms, about 24.8 days): in effect no timeout. */
export const NO_TIMEOUT_MS = 2_147_483_647;

function baseline(
  deps: PolicyDeps,
  config: SelectionConfig,
  name: string,
  plan: (input: PlanInput) => PlannedAttempt[],
  extra: Partial<ClientPolicy> = {},
): TablePolicy {
  const table = newTable(config, deps.now);
  return { name, table, ...tablePolicyParts(table), plan, ...extra };
}

const only = (server: ServerId | undefined, reason: string): PlannedAttempt[] =>
  server === undefined ? [] : [{ server, timeoutMs: NO_TIMEOUT_MS, reason }];

export interface SingleServerOptions {
  /** 1-based position among the candidates, in the origin's order (1 is the first server). */
  position?: number;
  /** Or the server itself. */
  server?: ServerId;
}

/** Every request to one replica; a resource with fewer replicas fails like a missing server. */
export function singleServerPolicy(deps: PolicyDeps, config: SelectionConfig, options: SingleServerOptions): TablePolicy {
  const { position, server } = options;
  if (server === undefined && !(Number.isInteger(position) && position! >= 1)) {
    throw new RangeError(`position must be an integer ≥ 1 (got ${String(position)})`);
  }
  const name = server === undefined ? `single-${position}` : `single-${server}`;
  return baseline(deps, config, name, ({ candidates }) =>
    server === undefined ? only(candidates[position! - 1], `single-server-${position}`) : only(candidates.includes(server) ? server : undefined, `single-server-${server}`),
  );
}

export function randomPolicy(deps: PolicyDeps, config: SelectionConfig): TablePolicy {
  return baseline(deps, config, 'random', ({ candidates }) =>
    candidates.length === 0 ? [] : only(candidates[Math.min(candidates.length - 1, Math.floor(deps.random() * candidates.length))], 'random'),
  );
}

/** One turn counter per policy instance (per worker: every tab takes the next replica). `startAt`: the first turn. */
export function roundRobinPolicy(deps: PolicyDeps, config: SelectionConfig, startAt = 0): TablePolicy {
  let turn = startAt;
  return baseline(deps, config, 'round-robin', ({ candidates }) => {
    if (candidates.length === 0) return [];
    const server = candidates[turn % candidates.length];
    turn = (turn + 1) % 1_000_000_007;
    return only(server, 'round-robin');
  });
}

const everyReplica = ({ candidates }: PlanInput): PlannedAttempt[] =>
  candidates.map((server) => ({ server, timeoutMs: NO_TIMEOUT_MS, reason: 'all-replicas', hedgeAfterMs: 0 }));

/** Every replica at once; the first usable response head wins, the others are cancelled. */
export function optimalPolicy(deps: PolicyDeps, config: SelectionConfig): TablePolicy {
  return baseline(deps, config, 'optimal', everyReplica);
}

/** Every replica at once; the first complete body wins (paper Section 6.1). */
export function optimalCompletePolicy(deps: PolicyDeps, config: SelectionConfig): TablePolicy {
  return baseline(deps, config, 'optimal-complete', everyReplica, { winOn: 'body' });
}
