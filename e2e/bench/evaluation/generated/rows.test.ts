import { describe, expect, it } from 'vitest';
import type { PolicyTraffic } from '../cluster.js';
import { commonPages, foldRuns, worldRows } from './rows.js';
import type { GeneratedPolicyRun } from './world-run.js';

const traffic = (requests: number, bodyBytes: number[] = []): PolicyTraffic => ({
  requests,
  resumeRequests: 0,
  byServer: {},
  byMethod: {},
  gets: new Map([[0, bodyBytes.map((bytes) => ({ server: 'A', method: 'GET', client: 0, sizeBytes: Number.NaN, range: undefined, arrivedAtMs: 0, outcome: 'ok' as const, plan: null, bodyBytes: bytes, completeMs: 1 }) as never)]]),
});

/** A policy that loaded `pages` pages of two 1000-byte resources, each taking `ms` (page time 2 × ms). */
function run(policy: string, pages: number, ms: number, options: { failed?: number; requests?: number; bytes?: number[] } = {}): GeneratedPolicyRun {
  const records = Array.from({ length: pages }, (_, page) =>
    [0, 1].map((index) => ({ client: 0, page, url: `/img/r${index}.jpg`, sizeBytes: 1000, responseMs: ms, ok: !(page === 0 && index < (options.failed ?? 0)), error: null })),
  ).flat();
  return { policy, records, pages: Array.from({ length: pages }, (_, page) => ({ client: 0, page, pageMs: 2 * ms, ok: true })), traffic: traffic(options.requests ?? records.length, options.bytes ?? records.map(() => 1000)) };
}

const world = { seed: 900_005, heldOut: true, stratum: 'page/2-3/failing', shape: 'page' as const };

describe('rows of a generated world', () => {
  it('compare policies on the pages every one of them loaded', () => {
    expect([...commonPages([run('a', 3, 10), run('b', 2, 10), run('c', 4, 10)])].sort()).toEqual(['0/0', '0/1']);
  });

  it('divide each mean by optimal-complete and by the best direct replica, the page time by the best direct page time', () => {
    const rows = worldRows(world, [
      run('webpp', 3, 120, { requests: 7 }),
      run('direct-A', 2, 100),
      run('direct-B', 3, 200),
      // Each body twice over, but for the cancelled halves of three requests.
      run('optimal-complete', 3, 80, { requests: 12, bytes: [...Array.from({ length: 9 }, () => 1000), 500, 500, 500] }),
    ]);
    const webpp = rows.find((row) => row.policy === 'webpp')!;
    expect(webpp).toMatchObject({ seed: 900_005, held_out: true, scenario: 'generated-900005', requests: 4, pages: 2, mean_ms: 120, best_single: 'direct-A', relative_to_best_single: 1.2, relative_to_optimal_complete: 1.5, page_mean_ms: 240, page_relative_to_best_single: 1.2 });
    // Extra requests over the whole run: 7 sent for 6 page requests.
    expect(webpp.extra_requests_pct).toBeCloseTo(16.67, 2);
    expect(webpp.extra_bytes_pct).toBe(0);
    expect(rows.find((row) => row.policy === 'optimal-complete')).toMatchObject({ extra_requests_pct: 100, extra_bytes_pct: 75 });
  });

  it('pass over a direct replica that failed requests when choosing the best single', () => {
    const rows = worldRows(world, [run('webpp', 2, 120), run('direct-A', 2, 50, { failed: 1 }), run('direct-B', 2, 100)]);
    expect(rows.find((row) => row.policy === 'direct-A')!.failed_requests).toBe(1);
    expect(rows.find((row) => row.policy === 'webpp')).toMatchObject({ best_single: 'direct-B', relative_to_best_single: 1.2 });
  });

  it('fold three runs into the median of each figure with its range', () => {
    const once = (ms: number) => worldRows(world, [run('webpp', 2, ms), run('direct-A', 2, 100), run('optimal-complete', 2, 100)]);
    const [webpp] = foldRuns([once(110), once(150), once(90)]).filter((row) => row.policy === 'webpp');
    expect(webpp).toMatchObject({ runs: 3, mean_ms: 110, relative_to_best_single: 1.1, range: { mean_ms: [90, 150], relative_to_best_single: [0.9, 1.5] } });
  });
});
