/**
 * Telemetry as named lifecycle callbacks on core's engine (like Workbox plugins'
 * fetchDidSucceed, fetchDidFail, …): the state reporter's counters and live events for
 * samples, failed servers, refreshes and probes; and the request path's own as a worker
 * lifecycle plugin (plugins.ts). Nothing here decides anything.
 */
import type { ClientPolicy, EngineHooks, ExchangeSample } from '@webpp/core';
import { decisionRecord, failoverEvents } from './decision-record.js';
import type { AttemptOutcome } from './messages.js';
import type { WorkerPlugin } from './plugins.js';
import { policyServerView } from './policy-views.js';
import type { StateReporter } from './state-reporter.js';
import { round2 } from './_private/numbers.js';


/** The record's outcome for a failure sample (a broken body counts as a network error). */
function attemptOutcome(outcome: ExchangeSample['outcome']): AttemptOutcome {
  return outcome === 'cut-mid-body' ? 'network-error' : (outcome);
}

export function telemetryHooks(reporter: StateReporter, policy: ClientPolicy): EngineHooks {
  return {
    sampleObserved(sample, wasFailed) {
      const nowMs = Date.now();
      if (sample.outcome === 'served' && sample.ttfbMs !== undefined) {
        reporter.count('samples');
        if (!reporter.listening) return; // the live sample event is for a page that listens
        const view = policyServerView(policy, sample.server, nowMs);
        const kind = sample.purpose === 'refresh' || sample.purpose === 'probe' ? sample.purpose : 'request';
        if (view) reporter.send({ type: 'sample', atMs: nowMs, server: sample.server, ttfbMs: round2(sample.ttfbMs), kind, view });
      } else if (sample.outcome !== 'served' && sample.outcome !== 'stale' && sample.outcome !== 'cancelled' && sample.purpose !== 'probe' && !wasFailed) {
        reporter.event({ type: 'server-failed', atMs: nowMs, server: sample.server, outcome: attemptOutcome(sample.outcome) });
      }
    },
    backgroundDidFinish(request, sample, url) {
      const nowMs = Date.now();
      const { server } = request;
      const status = sample.status === undefined ? {} : { status: sample.status };
      if (request.purpose === 'refresh') {
        reporter.count('refreshes');
        const ok = sample.outcome === 'served';
        reporter.event({ type: 'refresh', atMs: nowMs, server, url, ok, ...status, ...(ok && sample.ttfbMs !== undefined ? { ttfbMs: round2(sample.ttfbMs) } : {}) });
        return;
      }
      reporter.count('probes');
      const recovered = sample.outcome === 'served';
      if (recovered) reporter.count('recoveries');
      const row = policy.describe(nowMs).find((view) => view.server === server);
      const nextProbeInMs = recovered ? null : row?.nextProbeAtMs === undefined ? null : Math.max(0, row.nextProbeAtMs - nowMs);
      reporter.event({ type: 'probe', atMs: nowMs, server, url, recovered, ...status, nextProbeInMs });
    },
  };
}

/**
 * The request path's telemetry as a lifecycle plugin: the bound/served/failed counters, and
 * for each bound request its decision record and one `failover` event per failed attempt.
 */
export function telemetryPlugin(reporter: StateReporter, policyName: string): WorkerPlugin {
  return {
    handlerWillStart: () => reporter.count('bound'),
    handlerDidRespond(bound, result) {
      if (result.kind !== 'aborted') reporter.count(result.kind === 'served' ? 'served' : 'failed');
      const { request, logicalUrl, atMs, planMs } = bound;
      const decision = decisionRecord({ id: reporter.decisionId(), atMs, request, logicalUrl, policy: policyName, result, bindMs: planMs, totalMs: performance.now() - bound.arrivedMs });
      for (const event of failoverEvents(decision, Date.now())) {
        reporter.count('failovers');
        if (event.type === 'failover' && event.outcome === 'stale') reporter.count('staleBindings');
        reporter.event(event);
      }
      reporter.decision(decision);
    },
  };
}
