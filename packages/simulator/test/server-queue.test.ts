/**
 * Servers with finite capacity (issue 13): the M/M/c queue makes response time grow with the
 * load a server receives, the server pushes its own service time, and the herding experiment
 * measures per-server load.
 */
import { createRandom } from '@webpp/netem/model';
import { describe, expect, it } from 'vitest';
import { loadCv, randomPolicy, ServerQueue, ORIGIN_PUSH_DEFAULTS, runHerding, simulate, singleServerPolicy } from '../src/index.js';

const scenario = {
  formatVersion: 1,
  name: 'one-server',
  durationMs: 600_000,
  servers: { A: { link: { delayMs: 20, bandwidthBytesPerSec: 10_000_000 } }, B: { link: { delayMs: 20, bandwidthBytesPerSec: 10_000_000 } } },
};

/** Mean response time of `clients` closed-loop clients on server A alone (c = 1, 10 ms mean service). */
function meanOnA(clients: number, thinkTimeMs: number): number {
  const result = simulate({
    scenario,
    policy: singleServerPolicy('A'),
    seed: 5,
    workload: { clients, fileSizesBytes: [1_000], durationMs: 120_000, thinkTimeMs },
    queueing: { capacity: { A: { workers: 1, serviceMeanMs: 10 }, B: { workers: 1, serviceMeanMs: 10 } } },
    clientStartSpreadMs: thinkTimeMs,
  });
  return result.responseTime.meanMs;
}

describe('M/M/c server queue', () => {
  it('makes response time grow with the load a server receives', () => {
    // Offered load ≈ clients × 10 ms / (think + response): ρ ≈ 0.1, 0.4, 0.9.
    const light = meanOnA(2, 200);
    const half = meanOnA(10, 200);
    const heavy = meanOnA(24, 200);
    // Unloaded: 20 ms round trip + 10 ms service.
    expect(light).toBeGreaterThan(29);
    expect(light).toBeLessThan(34);
    expect(half).toBeGreaterThan(light + 3);
    expect(heavy).toBeGreaterThan(half + 20);
  });

  it('serves c requests at once, FCFS, and only then queues', () => {
    const queue = new ServerQueue('A', { workers: 2, serviceMeanMs: 100 }, ORIGIN_PUSH_DEFAULTS, () => 0.5, 100);
    const serviceMs = -Math.log(0.5) * 100;
    expect(queue.admit(0)).toBeCloseTo(serviceMs, 6);
    expect(queue.admit(0)).toBeCloseTo(serviceMs, 6); // the second worker
    expect(queue.admit(0)).toBeCloseTo(2 * serviceMs, 6); // waits for the first to free
    expect(queue.admit(10 * serviceMs)).toBeCloseTo(serviceMs, 6); // idle again
    expect(queue.arrivalsPerBin).toEqual([3, 0, 0, 0, 0, 0, 1]); // 100 ms bins: the fourth came at 693 ms
  });

  it('pushes a service time that rises with the queue (Fei\'s threshold and decay), and peers relay it', () => {
    const queue = new ServerQueue('A', { workers: 1, serviceMeanMs: 10 }, ORIGIN_PUSH_DEFAULTS, createRandom(1, 'q'), 1_000);
    for (let t = 0; t < 5_000; t += 100) queue.admit(t); // ρ = 0.1
    const calm = queue.ownValue(5_000)!.serviceMs;
    for (let t = 5_000; t < 10_000; t += 11) queue.admit(t); // ρ ≈ 0.9
    const busy = queue.ownValue(10_000)!.serviceMs;
    expect(calm).toBeLessThan(20);
    expect(busy).toBeGreaterThan(2 * calm);
    expect(queue.valueAsOf(5_000)!.serviceMs).toBeLessThan(20); // what a peer relays with a lag
  });

  it('spreads load evenly under random selection and measures the spread (load_cv)', () => {
    expect(loadCv({ a: [10, 10], b: [10, 10] }, 0, 2)).toBe(0);
    expect(loadCv({ a: [20, 20], b: [0, 0] }, 0, 2)).toBe(1);
    const even = simulate({
      scenario,
      policy: randomPolicy(),
      seed: 2,
      workload: { clients: 50, fileSizesBytes: [1_000], durationMs: 30_000, thinkTimeMs: 500 },
      queueing: { capacity: { A: { workers: 2, serviceMeanMs: 10 }, B: { workers: 2, serviceMeanMs: 10 } } },
    });
    expect(loadCv(even.load!.series, 5, 30)).toBeLessThan(0.2);
  });
});

describe('herding experiment', () => {
  it('runs many independent clients and reports load, mean, p95 and load_cv per policy', () => {
    const { row } = runHerding({ clients: 200, servers: 3, policy: 'random', durationMs: 20_000, startSpreadMs: 5_000, warmUpMs: 5_000 });
    expect(row).toMatchObject({ clients: 200, servers: 3, policy: 'random', source: 'simulator', failed: 0 });
    expect(Object.keys(row.load)).toEqual(['s01', 's02', 's03']);
    expect(row.mean_ms).toBeGreaterThan(0);
    expect(row.p95_ms).toBeGreaterThanOrEqual(row.mean_ms);
    expect(row.load_cv).toBeLessThan(0.5);
  });
});
