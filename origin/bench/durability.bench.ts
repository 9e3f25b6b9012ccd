/**
 * Durability under kill -9 (issue 10 §7): `npm run bench durability`.
 *
 * Three real `webpp-origin` servers (the built CLI, origin/dist/cli.js) take a seeded loop
 * of replica POST / PUT / DELETE, several in flight, while one server at a time is killed
 * with SIGKILL at seeded moments and restarted from its data folder. Afterwards: every
 * acknowledged write must be present or superseded, acknowledged deletes must stick, no
 * store may be damaged, and the three directories must converge (the invariants are
 * defined in durability/invariants.ts). Several seeds are run one after another; the
 * figures of each run and their median and range go to docs/benchmarks/durability.json.
 *
 * Environment: WEBPP_DURABILITY_SEEDS (comma-separated, default 1,2,3),
 * WEBPP_DURABILITY_KILLS (default 6), WEBPP_DURABILITY_MAX_WRITES (default 4000),
 * WEBPP_DURABILITY_SYNC_INTERVAL_MS (default 300), WEBPP_DURABILITY_ENTRY (dist, or source
 * to run origin/src/cli.ts through tsx). Loopback only; each run is bounded
 * (writes, kills, 180 s of writing, 30 s to converge). Exits 1 when a run lost an
 * acknowledged write, damaged a store or did not converge; the full trace of such a run is
 * written to a temporary file named in the output.
 */
import { writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_PATHS, runDurability, traceOf, type DurabilityResult } from './durability/run.js';

const OUTPUT = fileURLToPath(new URL('../../docs/benchmarks/durability.json', import.meta.url));
const seeds = (process.env.WEBPP_DURABILITY_SEEDS ?? '1,2,3').split(',').map((seed) => Number(seed.trim()));
const kills = Number(process.env.WEBPP_DURABILITY_KILLS ?? 6);
const maxWrites = Number(process.env.WEBPP_DURABILITY_MAX_WRITES ?? 4000);
const syncIntervalMs = Number(process.env.WEBPP_DURABILITY_SYNC_INTERVAL_MS ?? 300);

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

function summary(name: keyof DurabilityResult, runs: DurabilityResult[]): { median: number; min: number; max: number } {
  const values = runs.map((run) => run[name]).filter((value): value is number => typeof value === 'number');
  return { median: median(values), min: Math.min(...values), max: Math.max(...values) };
}

const runs: DurabilityResult[] = [];
let failed = false;
for (const seed of seeds) {
  const result = await runDurability(
    {
      seed,
      kills,
      killGapMs: [500, 2500],
      downMs: [100, 1500],
      maxWrites,
      concurrency: 6,
      paths: DEFAULT_PATHS,
      syncIntervalMs,
      tailMs: 1500,
      maxWriteMs: 180_000,
      convergeTimeoutMs: 30_000,
      entry: process.env.WEBPP_DURABILITY_ENTRY === 'source' ? 'source' : 'dist',
    },
    (line) => console.log(line),
  );
  runs.push(result);
  const bad = result.acknowledged_writes_lost > 0 || result.corrupt_stores > 0 || !result.converged || !result.converged_after_restart;
  console.log(
    `seed ${seed}: ${result.writes_attempted} writes, ${result.writes_acknowledged} acknowledged ` +
      `(POST ${result.by_method.POST.acknowledged}/${result.by_method.POST.attempted}, PUT ${result.by_method.PUT.acknowledged}/${result.by_method.PUT.attempted}, ` +
      `DELETE ${result.by_method.DELETE.acknowledged}/${result.by_method.DELETE.attempted}), ${result.writes_unacknowledged} unanswered (killed mid-request), ` +
      `${result.kills} kills, ${result.restarts} restarts; lost ${result.acknowledged_writes_lost}, corrupt stores ${result.corrupt_stores}, ` +
      `converged ${result.converged} in ${result.converge_ms} ms after the last write; directory/store mismatches ${result.directory_store_mismatches}; ` +
      `PUT pushes unconfirmed ${result.put_pushes_unconfirmed} (never applied ${result.put_pushes_unconfirmed_never_applied}); ${(result.duration_ms / 1000).toFixed(1)} s`,
  );
  for (const violation of result.violations.slice(0, 5)) console.log(`  violation: ${traceOf(result, violation).replaceAll('\n', '\n    ')}`);
  for (const violation of result.violations.slice(5, 20)) console.log(`  violation ${violation.invariant} (${violation.phase}) ${violation.server} ${violation.path} write ${violation.writeId ?? '-'}: ${violation.detail}`);
  for (const problem of result.store_problems.slice(0, 20)) console.log(`  store: ${problem}`);
  for (const mismatch of result.mismatches.slice(0, 20)) console.log(`  directory/store: ${mismatch}`);
  if (bad || result.violations.length > 0 || result.directory_store_mismatches > 0) {
    const trace = join(tmpdir(), `webpp-durability-seed-${seed}-${Date.now()}.json`);
    await writeFile(trace, JSON.stringify(result, null, 1));
    console.log(`  full trace: ${trace}`);
  }
  if (bad) failed = true;
}

const strip = ({ writes: _writes, ...rest }: DurabilityResult) => ({ ...rest, violations: rest.violations.slice(0, 50) });
const report = {
  benchmark: 'durability under kill -9 (issue 10 §7)',
  command: 'npm run bench durability',
  date: new Date().toISOString(),
  parameters: { seeds, kills, maxWrites, syncIntervalMs, concurrency: 6, paths: DEFAULT_PATHS, servers: 3 },
  seed: seeds.join(','),
  writes_attempted: runs.reduce((sum, run) => sum + run.writes_attempted, 0),
  writes_acknowledged: runs.reduce((sum, run) => sum + run.writes_acknowledged, 0),
  acknowledged_writes_lost: runs.reduce((sum, run) => sum + run.acknowledged_writes_lost, 0),
  kills: runs.reduce((sum, run) => sum + run.kills, 0),
  restarts: runs.reduce((sum, run) => sum + run.restarts, 0),
  corrupt_stores: runs.reduce((sum, run) => sum + run.corrupt_stores, 0),
  converged: runs.every((run) => run.converged && run.converged_after_restart),
  converge_ms: summary('converge_ms', runs),
  directory_store_mismatches: runs.reduce((sum, run) => sum + run.directory_store_mismatches, 0),
  put_pushes_unconfirmed: runs.reduce((sum, run) => sum + run.put_pushes_unconfirmed, 0),
  put_pushes_unconfirmed_never_applied: runs.reduce((sum, run) => sum + run.put_pushes_unconfirmed_never_applied, 0),
  runs: runs.map(strip),
};
await mkdir(dirname(OUTPUT), { recursive: true });
await writeFile(OUTPUT, `${JSON.stringify(report, null, 2)}\n`);
console.log(
  `\n${seeds.length} runs: ${report.writes_acknowledged}/${report.writes_attempted} writes acknowledged, ${report.acknowledged_writes_lost} lost, ` +
    `${report.kills} kills, ${report.corrupt_stores} corrupt stores, converged ${report.converged}, ` +
    `converge_ms median ${report.converge_ms.median} (range ${report.converge_ms.min}–${report.converge_ms.max}). Wrote ${OUTPUT}`,
);
process.exit(failed ? 1 : 0);
