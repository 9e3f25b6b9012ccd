/**
 * The simulator must run @webpp/core itself, not a copy of the algorithm. The core's
 * selection functions are wrapped in pass-through spies (they still run for real), so the
 * test can check that every Web++ decision in a simulation is the one core made.
 */
import { loadScenario } from '@webpp/netem';
import { afterEach, describe, expect, it, vi } from 'vitest';
import * as core from '@webpp/core';
import type { ReplicaAttempt } from '@webpp/core';
import { simulate, webppFastPolicy, webppPolicy } from '../src/index.js';

vi.mock('@webpp/core', async (importOriginal) => {
  const actual = await importOriginal<typeof import('@webpp/core')>();
  return {
    ...actual,
    rankReplicas: vi.fn(actual.rankReplicas),
    refreshTarget: vi.fn(actual.refreshTarget),
    dueProbes: vi.fn(actual.dueProbes),
  };
});

afterEach(() => {
  vi.restoreAllMocks();
  vi.mocked(core.rankReplicas).mockClear();
  vi.mocked(core.refreshTarget).mockClear();
  vi.mocked(core.dueProbes).mockClear();
});

describe('the simulator runs @webpp/core', () => {
  it('asks core for the attempt order of every request and serves from core\'s first choice', () => {
    const recordSample = vi.spyOn(core.LatencyTable.prototype, 'recordSample');
    const result = simulate({ scenario: loadScenario('degradation'), policy: webppFastPolicy(), keepRequests: true });
    const rankings = vi.mocked(core.rankReplicas).mock.results.map((entry) => entry.value as ReplicaAttempt[]);
    expect(rankings).toHaveLength(result.requests);
    expect(vi.mocked(core.rankReplicas).mock.calls[0]![0]).toEqual(['A', 'B', 'C']);
    // No request needed a retry here, so each was served by the server core ranked first.
    expect(result.exchanges.retry).toBe(0);
    const records = [...result.requestRecords!].sort((a, b) => a.startMs - b.startMs || a.client - b.client);
    const firstChoices = rankings.map((ranking) => ranking[0]!.server);
    expect(records.map((record) => record.server)).toEqual(firstChoices);
    // Core's choice moved from A to B as A degraded.
    expect(firstChoices.slice(0, 300).filter((server) => server === 'A').length).toBeGreaterThan(250);
    expect(firstChoices.slice(-300).filter((server) => server === 'B').length).toBeGreaterThan(250);
    // After every request, Figure 4's refresh and probe steps come from core too.
    expect(vi.mocked(core.refreshTarget)).toHaveBeenCalledTimes(result.requests);
    expect(vi.mocked(core.dueProbes)).toHaveBeenCalledTimes(result.requests);
    // Every first byte of a GET, and of each answered refresh/probe HEAD, is folded into core's table.
    expect(recordSample.mock.calls.length).toBeGreaterThanOrEqual(result.succeeded);
    expect(recordSample.mock.calls.length).toBeLessThanOrEqual(result.succeeded + result.exchanges.refresh + result.exchanges.probe);
    expect(result.exchanges.refresh).toBeGreaterThan(0);
  });

  it('validates its parameters with core\'s resolveSelectionConfig', () => {
    expect(() => webppPolicy({ config: { ewmaWeight: 2 } })).toThrow(/SelectionConfig\.ewmaWeight must be in \(0, 1\]/);
  });
});
