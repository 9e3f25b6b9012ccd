/**
 * Issue 10 §7, the short variant of `npm run bench durability`: three real `webpp-origin`
 * processes (the CLI from the sources) take a seeded loop of replica POST / PUT / DELETE
 * while one server at a time is killed with SIGKILL and restarted from its data folder.
 * Then every acknowledged write must be present or superseded, acknowledged deletes must
 * stick, no replica may hold bytes nobody wrote (bench/durability/invariants.ts defines
 * these), every store must restart cleanly and serve what it lists with the right bytes,
 * and the three directories must converge. The seed fixes the schedule; the outcome must
 * hold whatever the moments the kills land at.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_PATHS, runDurability, traceOf } from '../bench/durability/run.js';

describe('durability under kill -9', () => {
  it('loses no acknowledged write, damages no store and converges, across 3 kills during writes', async () => {
    const result = await runDurability({
      seed: 7,
      kills: 3,
      killGapMs: [200, 800],
      downMs: [50, 500],
      maxWrites: 400,
      concurrency: 6,
      paths: DEFAULT_PATHS,
      syncIntervalMs: 300,
      tailMs: 500,
      maxWriteMs: 60_000,
      convergeTimeoutMs: 20_000,
      entry: 'source',
    });
    // The run did what it says: three kills and restarts, and writes of each kind acknowledged.
    expect(result.kills).toBe(3);
    expect(result.restarts).toBe(3);
    for (const method of ['POST', 'PUT', 'DELETE'] as const) expect(result.by_method[method].acknowledged).toBeGreaterThan(0);
    expect(result.violations, result.violations.map((violation) => traceOf(result, violation)).join('\n\n')).toEqual([]);
    expect(result.acknowledged_writes_lost).toBe(0);
    expect(result.store_problems).toEqual([]);
    expect(result.corrupt_stores).toBe(0);
    expect(result.converged).toBe(true);
    expect(result.converged_after_restart).toBe(true);
  }, 150_000);
});
