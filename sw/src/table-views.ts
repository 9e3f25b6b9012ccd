/**
 * The dashboard's rows of the paper's latency table (core's table policies: the paper's
 * extended Refresh, `hedged`, the evaluation's baselines), in full: standard deviation, the
 * s-th percentile, the timeout, the probe interval. Carried by the policies add-on and the
 * Workbox strategy, which make those policies; the default worker runs `webpp`, whose rows
 * come from its own describe() (policy-views.ts), so it does not carry these (issue 26 §4).
 */
import type { ClientPolicy, LatencyTable, ServerId, TablePolicy } from '@webpp/core';
import type { PolicyResolver } from './addons.js';
import type { ServerView } from './messages.js';
import type { TableViews } from './policy-views.js';
import { round2 as round } from './_private/numbers.js';

/** One row of the table, with derived figures. */
function serverView(table: LatencyTable, server: ServerId, nowMs: number): ServerView | undefined {
  const row = table.get(server);
  if (!row) return undefined;
  const sPercentileMs = table.sPercentileMs(server);
  return {
    server,
    state: row.state,
    meanMs: round(row.meanMs),
    stdDevMs: round(Math.sqrt(row.varianceMs2)),
    sPercentileMs: Number.isFinite(sPercentileMs) ? round(sPercentileMs) : null,
    timeoutMs: table.timeoutMs(server),
    sampleCount: row.sampleCount,
    lastSampleAgeMs: row.sampleCount > 0 ? Math.max(0, nowMs - row.lastSampleAtMs) : null,
    expired: table.isExpired(server),
    probeIntervalMs: row.probeIntervalMs,
    nextProbeInMs: row.state === 'failed' ? Math.max(0, row.nextProbeAtMs - nowMs) : null,
  };
}

function tableViews(table: LatencyTable): TableViews {
  return {
    all: (nowMs) =>
      table
        .servers()
        .sort()
        .map((server) => serverView(table, server, nowMs))
        .filter((view): view is ServerView => view !== undefined),
    one: (server, nowMs) => serverView(table, server, nowMs),
    json: () => table.toJSON(),
  };
}

/** `resolve`, whose table policies carry their rows for the state snapshot and live events (policy-views.ts reads them). */
export function withTableViews(resolve: PolicyResolver): PolicyResolver {
  return (name, deps, options) => {
    const policy: ClientPolicy | undefined = resolve(name, deps, options);
    const table = (policy as Partial<TablePolicy> | undefined)?.table;
    return policy && table ? Object.assign(policy, { tableViews: tableViews(table) }) : policy;
  };
}
