import { describe, expect, it } from 'vitest';
import { bestSingle, withRegret } from './regret.js';

const row = (scenario: string, policy: string, mean_ms: number, failed_requests = 0) => ({ scenario, policy, mean_ms, failed_requests });

describe('the best single replica in hindsight', () => {
  it('is the direct replica with the lowest mean, per scenario; other policies are not candidates', () => {
    const rows = [row('s', 'direct-A', 300), row('s', 'direct-B', 120), row('s', 'optimal-complete', 90), row('s', 'webpp', 100), row('t', 'direct-A', 50), row('t', 'direct-B', 80), row('t', 'webpp', 100)];
    const out = withRegret(rows);
    expect(out.map((r) => [r.scenario, r.policy, r.best_single, r.relative_to_best_single])).toEqual([
      ['s', 'direct-A', 'direct-B', 2.5],
      ['s', 'direct-B', 'direct-B', 1],
      ['s', 'optimal-complete', 'direct-B', 0.75],
      ['s', 'webpp', 'direct-B', 0.833],
      ['t', 'direct-A', 'direct-A', 1],
      ['t', 'direct-B', 'direct-A', 1.6],
      ['t', 'webpp', 'direct-A', 2],
    ]);
  });

  it('is one of the replicas with the fewest failed requests, however fast the others were', () => {
    expect(bestSingle([row('s', 'direct-A', 40, 3), row('s', 'direct-B', 90)])?.policy).toBe('direct-B');
    expect(bestSingle([row('s', 'direct-A', 40, 3), row('s', 'direct-B', 90, 1), row('s', 'direct-C', 95, 1)])?.policy).toBe('direct-B');
  });

  it('leaves the ratio undefined (NaN) when no direct replica ran', () => {
    const [only] = withRegret([row('s', 'webpp', 100)]);
    expect(only!.best_single).toBeNull();
    expect(only!.relative_to_best_single).toBeNaN();
  });
});
