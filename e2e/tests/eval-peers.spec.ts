/**
 * The evaluation's real peers (issue 22 §1) load pages through the bench harness itself, so
 * that a broken harness cannot quietly drop them from `npm run bench evaluation`: freecdn
 * (npm freecdn-js, its own loader and worker, every replica a mirror) and a replica fetched
 * directly by the page with no worker. Three emulated replicas on loopback, real Chromium.
 * No timing assertions: the replicas differ by tens of milliseconds only to have a best one.
 */
import { expect, test } from '@playwright/test';
import { parseScenario, resolveWorkload } from '@webpp/netem';
import { runBrowserScenario } from '../bench/evaluation/browser-run.js';
import { startBenchCluster } from '../bench/evaluation/cluster.js';
import { peerPolicies } from '../bench/evaluation/policies.js';

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
