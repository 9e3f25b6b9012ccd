/**
 * The evaluation's real peers (issue 22 §1) load pages through the bench harness itself, so
 * that a broken harness cannot quietly drop them from `npm run bench evaluation`: freecdn
 * (npm freecdn-js, its own loader and worker, every replica a mirror) and a replica fetched
 * directly by the page with no worker. Three emulated replicas on loopback, real Chromium.
 * No timing assertions: the replicas differ by tens of milliseconds only to have a best one.
 */
import { expect, test } from '@playwright/test';
import { parseScenario, resolveWorkload } from '@webpp/netem';
import type { GeneratedWorld } from '@webpp/netem';
import { runBrowserScenario } from '../bench/evaluation/browser-run.js';
import { startBenchCluster } from '../bench/evaluation/cluster.js';
import { peerPolicies } from '../bench/evaluation/policies.js';
import { worldRows } from '../bench/evaluation/generated/rows.js';
import { runWorld } from '../bench/evaluation/generated/world-run.js';

const scenario = parseScenario({
  formatVersion: 1,
  name: 'peers',
  description: 'three steady replicas',
  durationMs: 3_000,
  seed: 7,
  servers: {
    A: { link: { delayMs: 40, bandwidthBytesPerSec: 2_000_000 } },
    B: { link: { delayMs: 5, bandwidthBytesPerSec: 2_000_000 } },
    C: { link: { delayMs: 60, bandwidthBytesPerSec: 2_000_000 } },
  },
  workload: { fileSizesBytes: [1_000, 20_000], thinkTimeMs: 50 },
});

test('freecdn and a direct single replica load every page request through the bench harness', async ({ browser }) => {
  test.setTimeout(120_000);
  const workload = resolveWorkload(scenario);
  const cluster = await startBenchCluster({ scenario, fileSizesBytes: workload.fileSizesBytes });
  try {
    const policies = peerPolicies(['A', 'B', 'C']).filter((policy) => policy.name === 'freecdn' || policy.name === 'direct-B');
    const runs = await runBrowserScenario({ browser, cluster, policies, workload, maxRequestsPerClient: 40, startDelayMs: 500 });
    for (const run of runs) {
      expect(run.records.length, run.policy.name).toBeGreaterThan(3);
      expect(run.records.filter((record) => !record.ok), run.policy.name).toEqual([]);
    }
    const direct = runs.find((run) => run.policy.name === 'direct-B')!;
    // Every request went to B, once: the page fetched it there itself.
    expect(cluster.traffic('direct-B').byServer).toEqual({ B: direct.records.length });
    // freecdn's worker sent each request to a replica (a mirror of /files/), with the page's query.
    const freecdn = runs.find((run) => run.policy.name === 'freecdn')!;
    const served = cluster.traffic('freecdn');
    expect(served.byMethod['GET']).toBeGreaterThanOrEqual(freecdn.records.length);
  } finally {
    await cluster.close();
  }
});

test('a generated world loads its pages with freecdn and a direct replica, each behind replicas of its own', async ({ browser }) => {
  test.setTimeout(120_000);
  const page = (urls: string[]) => urls.map((url, i) => ({ url, kind: 'img' as const, sizeBytes: 2_000 + 1_000 * i + (url.includes('?v=') ? 500 : 0) }));
  const world: GeneratedWorld = {
    seed: 5,
    generatorVersion: 2,
    heldOut: false,
    scenario: parseScenario({ ...scenario, name: 'generated-peers', servers: { A: scenario.servers['A'], B: { ...scenario.servers['B'], linkSharing: 'shared' } } }),
    capacity: {},
    // Two pages; the second has a new version of a file of the first (its own size) and a repeat.
    workload: { shape: 'page', http: 'http/1.1', connectionsPerHost: 6, clients: [[page(['/img/r1.jpg', '/js/r2.js', '/css/r3.css']), page(['/img/r1.jpg', '/js/r2.js?v=9'])]], thinkTimeMs: 0, requestTimeoutMs: 30_000 },
    traits: ['page'],
  };
  const policies = peerPolicies(['A', 'B']).filter((policy) => policy.name === 'freecdn' || policy.name === 'direct-B');
  const runs = await runWorld({ browser, world, policies, deadlineMs: 20_000, requestTimeoutMs: 30_000 });
  for (const run of runs) {
    expect(run.pages.map((loaded) => loaded.ok), run.policy).toEqual([true, true]);
    expect(run.records.map((record) => record.ok), run.policy).toEqual([true, true, true, true, true]);
    // The emulators of this policy saw its requests only (each policy has replicas of its own).
    expect(run.traffic.requests, run.policy).toBeGreaterThanOrEqual(5);
  }
  expect(runs.find((run) => run.policy === 'direct-B')!.traffic.byServer).toEqual({ B: 5 });
  const rows = worldRows({ seed: 5, heldOut: false, stratum: 'page/2-3/steady', shape: 'page' }, runs);
  expect(rows.map((row) => [row.policy, row.requests, row.failed_requests, row.best_single])).toEqual([
    ['direct-B', 5, 0, 'direct-B'],
    ['freecdn', 5, 0, 'direct-B'],
  ]);
});
