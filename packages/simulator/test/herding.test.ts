/**
 * The herd on ten servers (issue 13 §4): many clients, each with its own engine and the
 * default webpp policy, against servers of finite capacity. Before the one extra budget and
 * the "busy, not dead" rule, every request of such a run failed: the new clients' cold-start
 * measurements and failovers kept every queue past the attempt timeouts.
 */
import { describe, expect, it } from 'vitest';
import { WEBPP_DEFAULTS } from '@webpp/core';
import { runHerding } from '../src/herding.js';

describe('herding on ten servers', () => {
  it('serves every request of a 300-client run, with the extra requests within the budget', () => {
    const clients = 300;
    const { row, result } = runHerding({ clients, servers: 10, policy: 'webpp', durationMs: 40_000, startSpreadMs: 10_000, warmUpMs: 10_000 });
    expect(row.requests).toBeGreaterThan(1_000);
    expect(row.failed).toBe(0);
    expect(result.failed).toBe(0);
    // Each client's budget: 5 % of its requests, a floor, and at most its capacity in debt.
    const { extraBudgetShare, extraBudgetFloorTokens, bucketCapacityTokens } = WEBPP_DEFAULTS;
    const perClient = extraBudgetFloorTokens + Math.max(extraBudgetFloorTokens, bucketCapacityTokens);
    expect(result.extraRequests).toBeLessThanOrEqual(extraBudgetShare * result.requests + clients * perClient);
  });
});

describe('the herd on three servers (issue 13 §4 goals, at 2 000 clients)', () => {
  const run = (policy: string) => runHerding({ clients: 2_000, servers: 3, policy, durationMs: 60_000, warmUpMs: 30_000 }).row;

  it('the default spreads the load (load_cv at most half the single best\'s) with a mean no worse than random; without the load spread the herd comes back', () => {
    const webpp = run('webpp');
    const single = run('webpp-no-sets');
    const random = run('random');
    const noSpread = run('webpp-no-spread');
    expect(webpp.failed).toBe(0);
    expect(webpp.load_cv).toBeLessThanOrEqual(0.5 * single.load_cv);
    expect(webpp.mean_ms).toBeLessThanOrEqual(random.mean_ms);
    // Fei's sets alone: every client leaves the busy nearest server and comes back together.
    expect(noSpread.load_cv).toBeGreaterThan(2 * webpp.load_cv);
    expect(noSpread.mean_ms).toBeGreaterThan(2 * webpp.mean_ms);
    // Four runs of 2 000 clients: about 15 s of CPU, over a minute on a loaded 2-core machine.
  }, 180_000);
});
