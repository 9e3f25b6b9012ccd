/**
 * The paper's extended Refresh algorithm (Web++ paper, Section 4.1, Figure 4) as a policy:
 * the available server with the lowest S-percentile, eq. (1) (random while every entry has
 * expired), failed servers last; each attempt's timeout is the T-percentile, and a timed-out
 * attempt runs on as a hedge until timeoutCeilingMs (the engine's deadline). After each
 * request, an asynchronous HEAD refreshes the candidate with the oldest expired entry, and
 * failed servers are probed every F, F doubling per probe.
 *
 * Registered as `paper` (PAPER_DEFAULTS, Figure 10), `fast` (FAST_PRESET) and `refresh`
 * (the worker's old name: the base follows its `preset` option).
 */
import { dueProbes, rankReplicas, refreshTarget } from '../select-replica.js';
import type { SelectionConfig } from '../types.js';
import type { BackgroundRequest, PolicyDeps } from '../engine/policy-types.js';
import { newTable, tablePolicyParts } from './table-policy.js';
import type { TablePolicy } from './table-policy.js';

export function extendedRefreshPolicy(deps: PolicyDeps, name: string, config: Required<SelectionConfig>): TablePolicy {
  const table = newTable(config, deps.now);
  return {
    name,
    table,
    ...tablePolicyParts(table),
    plan: ({ candidates }) =>
      rankReplicas(candidates, table, deps.random).map((attempt) => ({
        ...attempt,
        deadlineMs: Math.max(attempt.timeoutMs, config.timeoutCeilingMs),
      })),
    maintenance: ({ candidates, inFlight, nowMs }) => {
      const requests: BackgroundRequest[] = [];
      for (const server of dueProbes(table, nowMs)) {
        if (inFlight.has(server)) continue;
        table.recordProbeSent(server); // F doubles (Figure 4)
        requests.push({ server, purpose: 'probe', method: 'head', timeoutMs: table.timeoutMs(server) });
      }
      const refresh = refreshTarget(table, candidates);
      if (refresh !== undefined && !inFlight.has(refresh)) {
        requests.push({ server: refresh, purpose: 'refresh', method: 'head', timeoutMs: table.timeoutMs(refresh) });
      }
      return requests;
    },
  };
}
