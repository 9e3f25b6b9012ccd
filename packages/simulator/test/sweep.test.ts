import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FAST_PRESET } from '@webpp/core';
import { loadScenario, parseScenario } from '@webpp/netem';
import { describe, expect, it } from 'vitest';
import { comparePolicies, comparisonMarkdown, runSweep, sweepMarkdown } from '../src/index.js';

const stationary = parseScenario({
  formatVersion: 1,
  name: 'steady',
  durationMs: 60_000,
  servers: {
    A: { link: { delayMs: { distribution: 'lognormal', meanMs: 40, stdDevMs: 10 }, bandwidthBytesPerSec: 1_000_000 } },
    B: { link: { delayMs: { distribution: 'lognormal', meanMs: 90, stdDevMs: 30 }, bandwidthBytesPerSec: 500_000 } },
  },
  workload: { clients: 2, requestsPerClient: 100 },
});

describe('runSweep', () => {
  it('reports each variant before it runs, with how many there are (for progress)', () => {
    const seen: string[] = [];
    const result = runSweep({
      scenarios: [stationary, { ...stationary, name: 'steady-2' }],
      bases: [{ name: 'fast', config: FAST_PRESET }],
      values: { ewmaWeight: [0.5], ttlMs: [], selectPercentile: [], timeoutPercentile: [], timeoutFloorMs: [], timeoutMeanMultiple: [], probeIntervalMs: [], clients: [] },
      seeds: [1],
      onVariant: (progress) => seen.push(`${progress.scenario} ${progress.scenarioIndex + 1}/${progress.scenarioCount} ${progress.parameter}=${progress.value} ${progress.variantIndex + 1}/${progress.variantCount}`),
    });
    expect(seen).toEqual(['steady 1/2 baseline=null 1/2', 'steady 1/2 ewmaWeight=0.5 2/2', 'steady-2 2/2 baseline=null 1/2', 'steady-2 2/2 ewmaWeight=0.5 2/2']);
    expect(result.rows).toHaveLength(seen.length);
  });

  it('varies one parameter at a time around each base and reports ratios to optimal', () => {
    const result = runSweep({
      scenarios: [stationary],
      bases: [{ name: 'fast', config: FAST_PRESET }],
      values: { ewmaWeight: [0.1, 0.5], ttlMs: [1000], selectPercentile: [50], timeoutPercentile: [99], timeoutFloorMs: [200], timeoutMeanMultiple: [0], probeIntervalMs: [1000], clients: [1, 4] },
      seeds: [1, 2],
    });
    // baseline + 2 r + 1 TTL + 1 S + 1 T + 1 floor + 1 multiple + 1 F + 2 clients × shared/private
    expect(result.rows).toHaveLength(13);
    expect(result.rows.filter((row) => row.parameter === 'ewmaWeight').map((row) => row.r)).toEqual([0.1, 0.5]);
    expect(result.rows.find((row) => row.parameter === 'ttlMs')).toMatchObject({ ttl_ms: 1000, r: FAST_PRESET.ewmaWeight });
    expect(result.rows.filter((row) => row.parameter === 'clients').map((row) => [row.clients, row.shared_table])).toEqual([
      [1, true],
      [1, false],
      [4, true],
      [4, false],
    ]);
    for (const row of result.rows) {
      // Common random numbers on a stationary network: Web++ can only match or trail optimal.
      expect(row.relative_to_optimal).toBeGreaterThanOrEqual(1);
      expect(row.failed_requests).toBe(0);
      expect(row.seeds).toBe(2);
      expect(row.prediction_error).not.toBeNull();
    }
    // A short TTL costs refresh requests.
    const baseline = result.rows.find((row) => row.parameter === 'baseline')!;
    const shortTtl = result.rows.find((row) => row.parameter === 'ttlMs')!;
    expect(shortTtl.extra_requests_pct).toBeGreaterThan(baseline.extra_requests_pct);
    expect(result.optimalMeanMs['steady']).toBeGreaterThan(0);
    const markdown = sweepMarkdown(result);
    expect(markdown).toContain('## Base: fast');
    expect(markdown).toContain('### r — EWMA weight');
    expect(markdown).toContain('| 4 private |');
  });

  it('runs a full grid of r × TTL × S × T on request', () => {
    const result = runSweep({
      scenarios: [stationary],
      bases: [{ name: 'fast', config: FAST_PRESET }],
      values: { ewmaWeight: [0.5, 0.95], ttlMs: [1000, 20_000], selectPercentile: [55], timeoutPercentile: [99, 99.9] },
      grid: true,
    });
    expect(result.rows.filter((row) => row.parameter === 'grid')).toHaveLength(8);
  });
});

describe('reports', () => {
  it('renders the comparison with goals against the issue\'s targets', () => {
    const comparisons = comparePolicies({ scenarios: [loadScenario('evening')], workload: { requestsPerClient: 40 } });
    const markdown = comparisonMarkdown(comparisons);
    expect(markdown).toContain('## evening');
    expect(markdown).toContain('| optimal |');
    expect(markdown).toMatch(/### Goals — webpp-fast\n- evening: mean [\d.]+× optimal/);
    const optimalRow = comparisons[0]!.rows.find((row) => row.policy === 'optimal')!;
    expect(optimalRow).toMatchObject({ relative_to_optimal: 1, extra_requests_pct: 200, failed_requests: 0, source: 'simulator' });
    expect(Object.keys(optimalRow)).toEqual(
      expect.arrayContaining(['scenario', 'policy', 'mean_ms', 'median_ms', 'p95_ms', 'relative_to_optimal', 'extra_requests_pct', 'failed_requests']),
    );
  });
});

describe('webpp-sim CLI', () => {
  it('writes the comparison as JSON rows and markdown', () => {
    const dir = mkdtempSync(join(tmpdir(), 'webpp-sim-'));
    try {
      const cli = join(import.meta.dirname, '../src/cli.ts');
      const run = spawnSync(
        process.execPath,
        ['--import', 'tsx', cli, 'run', '--scenario', 'outage', '--policy', 'single-A', '--policy', 'optimal', '--requests-per-client', '30', '--json', join(dir, 'r.json'), '--markdown', join(dir, 'r.md')],
        { encoding: 'utf8', timeout: 60_000 },
      );
      expect(run.stderr).toContain('wrote');
      expect(run.status).toBe(0);
      const rows = JSON.parse(readFileSync(join(dir, 'r.json'), 'utf8')) as Array<{ policy: string; requests: number }>;
      expect(rows.map((row) => [row.policy, row.requests])).toEqual([
        ['single-A', 90],
        ['optimal', 90],
      ]);
      expect(readFileSync(join(dir, 'r.md'), 'utf8')).toContain('## outage');
      const bad = spawnSync(process.execPath, ['--import', 'tsx', cli, 'run', '--policy', 'fastest'], { encoding: 'utf8', timeout: 60_000 });
      expect(bad.status).toBe(1);
      expect(bad.stderr).toContain('unknown policy "fastest"');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
