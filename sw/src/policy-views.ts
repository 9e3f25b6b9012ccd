/**
 * The dashboard's rows (ServerView) from whatever policy runs: the paper's latency table in
 * full when the policy keeps one (core's TablePolicy), else the policy's own describe().
 */
import type { ClientPolicy, LatencyTable, PolicyServerView, ServerId, TablePolicy } from '@webpp/core';
import type { ServerView } from './messages.js';
import { serverView, serverViews } from './state-reporter.js';

/**
 * The policy's latency table, when it is one of core's table policies (the paper's, the
 * baselines). Recognised by its shape, not with instanceof: those policies come from the
 * policies add-on (addons.ts), whose LatencyTable class is not this bundle's.
 */
function tableOf(policy: ClientPolicy): LatencyTable | undefined {
  const table = (policy as Partial<TablePolicy>).table;
  return typeof table === 'object' && table !== null && typeof table.toJSON === 'function' && typeof table.get === 'function' ? table : undefined;
}

function fromDescription(view: PolicyServerView, nowMs: number): ServerView {
  const meanMs = view.ttfbEstimateMs ?? 0;
  return {
    server: view.server,
    state: view.state === 'failed' ? 'failed' : 'available',
    meanMs: Math.round(meanMs * 100) / 100,
    stdDevMs: 0,
    sPercentileMs: view.ttfbEstimateMs === undefined ? null : Math.round(meanMs * 100) / 100,
    timeoutMs: view.timeoutMs ?? 0,
    sampleCount: view.sampleCount,
    lastSampleAgeMs: view.sampleCount > 0 ? Math.max(0, nowMs - view.lastSampleAtMs) : null,
    expired: false,
    probeIntervalMs: 0,
    nextProbeInMs: view.nextProbeAtMs === undefined ? null : Math.max(0, view.nextProbeAtMs - nowMs),
    throughputBytesPerMs: view.throughputBytesPerMs,
    protocol: view.protocol,
  };
}

export function policyServerViews(policy: ClientPolicy, nowMs: number): ServerView[] {
  const table = tableOf(policy);
  if (table) return serverViews(table, nowMs);
  return policy
    .describe(nowMs)
    .map((view) => fromDescription(view, nowMs))
    .sort((a, b) => (a.server < b.server ? -1 : a.server > b.server ? 1 : 0));
}

export function policyServerView(policy: ClientPolicy, server: ServerId, nowMs: number): ServerView | undefined {
  const table = tableOf(policy);
  if (table) return serverView(table, server, nowMs);
  const view = policy.describe(nowMs).find((candidate) => candidate.server === server);
  return view && fromDescription(view, nowMs);
}

/** The persisted state as the snapshot's `table` field shows it (the paper's table, or the policy's own JSON). */
export function policyTableJSON(policy: ClientPolicy): ReturnType<LatencyTable['toJSON']> {
  const table = tableOf(policy);
  return table ? table.toJSON() : { formatVersion: 1, servers: {} };
}
