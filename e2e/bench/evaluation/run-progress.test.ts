import { describe, expect, it } from 'vitest';
import type { ResultRow } from './rows.js';
import type { BenchPolicy } from './policies.js';
import { COLLECT_MS, EvaluationProgress, scenarioSummary, scenarioUnits, SETUP_MS_PER_POLICY, SIMULATE_MS_PER_POLICY } from './run-progress.js';

const row = (policy: string, relative: number, requests: number, failed: number): ResultRow =>
  ({ policy, relative_to_optimal: relative, requests, failed_requests: failed }) as ResultRow;

describe('evaluation progress', () => {
  it('sums a one-line summary of a finished scenario, naming the policy closest to optimal', () => {
    const rows = [row('optimal-complete', 1, 300, 0), row('optimal', 0.9, 300, 0), row('webpp-fast', 1.175, 280, 1), row('hedged', 1.05, 270, 0)];
    expect(scenarioSummary('peak (1/4)', 161_000, rows)).toBe('peak (1/4) done in 2 min 41 s: 4 policies, 1150 requests, 1 failed; closest to optimal-complete: hedged ×1.050');
    expect(scenarioSummary('peak (1/4)', 1_000, [row('optimal', 1, 3, 0)])).toBe('peak (1/4) done in 1 s: 1 policies, 3 requests, 0 failed');
  });

  it('weighs a scenario by its run time plus the setup, collection and simulation around it', () => {
    expect(scenarioUnits({ name: 'peak', policies: 10, durationMs: 150_000 })).toBe(10 * (SETUP_MS_PER_POLICY + SIMULATE_MS_PER_POLICY) + 1_500 + 150_000 + COLLECT_MS);
  });

  it('names the scenario and the policy being set up, then the run, and counts each part done', () => {
    const output = { text: '', isTTY: true, columns: 300, write: (chunk: string) => (output.text += chunk) };
    const progress = new EvaluationProgress(
      [
        { name: 'peak', policies: 2, durationMs: 10_000 },
        { name: 'evening', policies: 2, durationMs: 10_000 },
      ],
      // A terminal, whatever the environment the tests run in (CI sets $CI).
      { output, redrawIntervalMs: 0, interactive: true },
    );
    const lastLine = (): string => output.text.split('\r\x1b[2K').at(-1)!;
    const hooks = progress.scenarioHooks(0);
    hooks.contextWillPrepare?.({ name: 'webpp-fast' } as BenchPolicy, 0, 2);
    expect(lastLine()).toContain('· peak (1/2): setting up webpp-fast (1/2)');
    hooks.contextWillPrepare?.({ name: 'optimal' } as BenchPolicy, 1, 2);
    expect(lastLine()).toContain('· peak (1/2): setting up optimal (2/2)');
    hooks.workloadWillStart?.(1_500, 10_000);
    expect(lastLine()).toMatch(/· peak \(1\/2\): 2 policies running 0 s \/ 12 s$/);
    hooks.workloadDidFinish?.();
    progress.simulating(0, 5);
    expect(lastLine()).toContain('peak (1/2): simulating 2 policies × 5 seeds');
    progress.scenarioDone(0, [row('optimal', 1, 10, 0), row('webpp-fast', 1.2, 9, 0)]);
    expect(output.text).toMatch(/peak \(1\/2\) done in \d+ s: 2 policies, 19 requests, 0 failed; closest to optimal-complete: webpp-fast ×1.200\n/);
    expect(progress.progress.fraction()).toBeCloseTo(0.5, 6);
    progress.close();
  });
});
