/**
 * The simulator must run @webpp/core's client engine itself, not a copy of it. The engine's
 * stages are wrapped in pass-through spies (they still run for real), so the test can check
 * that every decision in a simulation is the one core's engine and policy made.
 */
import { loadScenario } from '@webpp/netem';
import { afterEach, describe, expect, it, vi } from 'vitest';
import * as core from '@webpp/core';
import type { EngineAttempt, PlanInput } from '@webpp/core';
import { simulate, webppFastPolicy, webppPolicy } from '../src/index.js';

afterEach(() => {
  vi.restoreAllMocks();
});

describe('the simulator runs @webpp/core', () => {
  it('asks core\'s engine for the attempt order of every request and serves from its first choice', () => {
    const plan = vi.spyOn(core.ClientEngine.prototype, 'plan');
    const maintain = vi.spyOn(core.ClientEngine.prototype, 'maintain');
    const recordSample = vi.spyOn(core.LatencyTable.prototype, 'recordSample');
    const result = simulate({ scenario: loadScenario('degradation'), policy: webppFastPolicy(), keepRequests: true });
    const plans = plan.mock.results.map((entry) => entry.value as EngineAttempt[]);
    expect(plans).toHaveLength(result.requests);
    expect((plan.mock.calls[0]![0] as PlanInput).candidates).toEqual(['A', 'B', 'C']);
    // No request needed a retry here, so each was served by the server core ranked first.
    expect(result.exchanges.retry).toBe(0);
    const records = [...result.requestRecords!].sort((a, b) => a.startMs - b.startMs || a.client - b.client);
    const firstChoices = plans.map((ranking) => ranking[0]!.server);
    expect(records.map((record) => record.server)).toEqual(firstChoices);
    // Core's choice moved from A to B as A degraded.
    expect(firstChoices.slice(0, 300).filter((server) => server === 'A').length).toBeGreaterThan(250);
    expect(firstChoices.slice(-300).filter((server) => server === 'B').length).toBeGreaterThan(250);
    // After every request, Figure 4's refresh and probe step runs in core's engine too.
    expect(maintain).toHaveBeenCalledTimes(result.requests);
    // Every complete GET, and each answered refresh/probe HEAD, is folded into core's table.
    expect(recordSample.mock.calls.length).toBeGreaterThanOrEqual(result.succeeded);
    expect(recordSample.mock.calls.length).toBeLessThanOrEqual(result.succeeded + result.exchanges.refresh + result.exchanges.probe);
    expect(result.exchanges.refresh).toBeGreaterThan(0);
  });

  it('validates its parameters with core\'s resolveSelectionConfig', () => {
    expect(() => webppPolicy({ config: { ewmaWeight: 2 } })).toThrow(/SelectionConfig\.ewmaWeight must be in \(0, 1\]/);
  });
});
