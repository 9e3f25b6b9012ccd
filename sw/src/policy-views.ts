/**
 * The dashboard's rows (ServerView) from whatever policy runs: the paper's latency table in
 * full when the policy carries its table's rows (a table policy made by the policies add-on or
 * the Workbox strategy: table-views.ts), else the policy's own describe().
 */
import type { ClientPolicy, LatencyTable, PolicyServerView, ServerId } from '@webpp/core';
import type { ServerView } from './messages.js';
import { round2 } from './_private/numbers.js';

/** A table policy's rows (table-views.ts), put on the policy by the resolver that made it. */
export interface TableViews {
  all(nowMs: number): ServerView[];
  one(server: ServerId, nowMs: number): ServerView | undefined;
  json(): ReturnType<LatencyTable['toJSON']>;
}

const viewsOf = (policy: ClientPolicy): TableViews | undefined => (policy as { tableViews?: TableViews }).tableViews;

function fromDescription(view: PolicyServerView, nowMs: number): ServerView {
  const meanMs = view.ttfbEstimateMs ?? 0;
  return {
    server: view.server,
    state: view.state === 'failed' ? 'failed' : 'available',
    meanMs: round2(meanMs),
    stdDevMs: 0,
    sPercentileMs: view.ttfbEstimateMs === undefined ? null : round2(meanMs),
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
  const views = viewsOf(policy);
  if (views) return views.all(nowMs);
  return policy
    .describe(nowMs)
    .map((view) => fromDescription(view, nowMs))
    .sort((a, b) => (a.server < b.server ? -1 : a.server > b.server ? 1 : 0));
}

export function policyServerView(policy: ClientPolicy, server: ServerId, nowMs: number): ServerView | undefined {
  const views = viewsOf(policy);
  if (views) return views.one(server, nowMs);
  const view = policy.describe(nowMs).find((candidate) => candidate.server === server);
  return view && fromDescription(view, nowMs);
}

/** The persisted state as the snapshot's `table` field shows it (the paper's table, or an empty one). */
export function policyTableJSON(policy: ClientPolicy): ReturnType<LatencyTable['toJSON']> {
  return viewsOf(policy)?.json() ?? { formatVersion: 1, servers: {} };
}
