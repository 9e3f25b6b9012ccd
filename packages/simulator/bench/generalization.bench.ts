/**
 * The generalization suite (issue 22 §1, §3): webpp, webpp-paper, freecdn, optimal-complete
 * and every single replica on generated worlds (@webpp/netem/model generateWorld), training
 * and held-out seeds (fixed in generator.ts before tuning), in the simulator.
 *
 *   npm run bench generalization                     # every seed of both ranges
 *   npm run bench generalization -- --seeds 40       # a stratified subset (evenly spaced, half from each range)
 *   npm run bench generalization -- --training-only  # tuning: never look at the held-out seeds
 *   npm run bench generalization -- --workers 2      # processes (default 2)
 *   npm run bench generalization -- --report-only    # rewrite generalization.md and the plot from generalization.json
 *
 * Writes docs/benchmarks/generalization.json (one row per seed and policy, the worlds, and a
 * summary of each ratio for training and held-out seeds apart), generalization.md (its
 * tables, the goals and the worst held-out seeds) and generalization-cdf.svg (the CDF of
 * relative_to_best_single over held-out seeds). A subset or a training-only
 * run writes generalization-partial.json instead, so the committed figures stay whole.
 */
import { fork } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { GENERATOR_VERSION, HELD_OUT_SEEDS, TRAINING_SEEDS, seedsOf } from '@webpp/netem/model';
import { generalizationMarkdown, ratioCdfSvg, runSeed, summarizeRows, type GeneralizationDocument, type GeneralizationRow, type GeneralizationWorld } from '@webpp/simulator';
import { Progress } from '../../../e2e/bench/support/progress.js';

interface SeedResult {
  world: GeneralizationWorld;
  rows: GeneralizationRow[];
}

const args = process.argv.slice(2);
const option = (name: string): string | undefined => {
  const index = args.indexOf(name);
  return index >= 0 ? args[index + 1] : undefined;
};

// A shard: run the seeds it is sent, one message per seed back to the parent.
const outDir = new URL('../../../docs/benchmarks/', import.meta.url);

if (process.send && args.includes('--shard')) {
  process.on('message', (seeds: number[]) => {
    for (const seed of seeds) process.send!(runSeed(seed));
    process.exit(0);
  });
} else if (args.includes('--report-only')) {
  const document = JSON.parse(readFileSync(new URL('generalization.json', outDir), 'utf8')) as GeneralizationDocument & { rows: GeneralizationRow[] };
  writeReport(document, document.rows, '');
} else {
  await main();
}

/** generalization.md and the held-out CDF, from the document. */
function writeReport(document: GeneralizationDocument, rows: readonly GeneralizationRow[], suffix: string): void {
  writeFileSync(new URL(`generalization${suffix}.md`, outDir), generalizationMarkdown(document));
  if (document.seeds_run.held_out === 0) return;
  const series = ['webpp', 'webpp-paper', 'freecdn'].map((policy) => ({ policy, values: rows.filter((row) => row.held_out && row.policy === policy).map((row) => row.relative_to_best_single) }));
  const title = `Held-out seeds (${document.seeds_run.held_out}): mean response time relative to the best single replica`;
  writeFileSync(new URL(`generalization${suffix}-cdf.svg`, outDir), ratioCdfSvg(series, title, 'mean ÷ best single replica\'s mean (log scale; left of the dashed line: better than the best single)'));
}

/** n seeds spread evenly over a range. */
function spread(range: { first: number; count: number }, n: number): number[] {
  const all = seedsOf(range);
  if (n >= all.length) return all;
  return Array.from({ length: n }, (_, i) => all[Math.floor((i * all.length) / n)]!);
}

async function main(): Promise<void> {
  const subset = option('--seeds') === undefined ? undefined : Number(option('--seeds'));
  const trainingOnly = args.includes('--training-only');
  const workers = Math.max(1, Number(option('--workers') ?? 2));
  const training = subset === undefined ? seedsOf(TRAINING_SEEDS) : spread(TRAINING_SEEDS, Math.ceil(subset / (trainingOnly ? 1 : 2)));
  const heldOut = trainingOnly ? [] : subset === undefined ? seedsOf(HELD_OUT_SEEDS) : spread(HELD_OUT_SEEDS, Math.floor(subset / 2));
  const seeds = [...training, ...heldOut];
  const progress = new Progress({ title: 'generalization', totalUnits: seeds.length });
  const startedMs = performance.now();
  const results: SeedResult[] = [];
  // Interleave seeds over the shards so each gets a like mix.
  const shards = Array.from({ length: workers }, (_, w) => seeds.filter((_, i) => i % workers === w)).filter((shard) => shard.length > 0);
  await Promise.all(
    shards.map(
      (shard) =>
        new Promise<void>((resolve, reject) => {
          const child = fork(fileURLToPath(import.meta.url), ['--shard'], { execArgv: ['--import', 'tsx'] });
          child.on('message', (result: SeedResult) => {
            results.push(result);
            progress.step(`seed ${result.world.seed} (${result.world.shape}, ${result.world.replicas} replicas)`, 1);
          });
          child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`a shard exited with ${code}`))));
          child.send(shard);
        }),
    ),
  );
  progress.close();
  results.sort((a, b) => a.world.seed - b.world.seed);
  const rows = results.flatMap((result) => result.rows);
  const worlds = results.map((result) => result.world);
  const summary = {
    training: summarizeRows(rows.filter((row) => !row.held_out)),
    held_out: summarizeRows(rows.filter((row) => row.held_out)),
  };
  const worst = (policy: string): Array<Record<string, unknown>> =>
    rows
      .filter((row) => row.held_out && row.policy === policy)
      .sort((a, b) => b.relative_to_best_single - a.relative_to_best_single)
      .slice(0, 10)
      .map((row) => {
        const world = worlds.find((candidate) => candidate.seed === row.seed)!;
        return { seed: row.seed, relative_to_best_single: row.relative_to_best_single, relative_to_optimal_complete: row.relative_to_optimal_complete, best_single: world.best_single, served_by: row.served_by, marked_failed: row.marked_failed, shape: world.shape, http: world.http, traits: world.traits };
      });
  const elapsedS = Math.round((performance.now() - startedMs) / 1000);
  const whole = subset === undefined && !trainingOnly;
  mkdirSync(outDir, { recursive: true });
  const document = {
    description:
      'npm run bench generalization (packages/simulator/bench/generalization.bench.ts): every policy on generated worlds (@webpp/netem/model generateWorld), ' +
      'training and held-out seeds apart. Ratios: mean_ms over optimal-complete\'s, and over the best single replica\'s (of the singles with the fewest failed requests, the lowest mean); ' +
      'page_relative_to_best_single: page time over the best single\'s page time. Extra requests: exchanges beyond one per request; extra bytes: body bytes beyond one copy of each served resource, in % of the workload\'s bytes.',
    generator_version: GENERATOR_VERSION,
    training_seeds: TRAINING_SEEDS,
    held_out_seeds: HELD_OUT_SEEDS,
    seeds_run: { training: training.length, held_out: heldOut.length },
    elapsed_s: elapsedS,
    summary,
    worst_held_out: { webpp: worst('webpp'), 'webpp-paper': worst('webpp-paper'), freecdn: worst('freecdn') },
    worlds,
    rows,
  };
  const suffix = whole ? '' : '-partial';
  writeFileSync(new URL(`generalization${suffix}.json`, outDir), `${JSON.stringify(document, null, 1)}\n`);
  writeReport(document as unknown as GeneralizationDocument, rows, suffix);
  console.log(`${seeds.length} seeds in ${elapsedS} s (${workers} processes)`);
  for (const [set, policies] of Object.entries(summary)) {
    for (const [policy, s] of Object.entries(policies)) {
      const r = s.relative_to_best_single;
      const o = s.relative_to_optimal_complete;
      console.log(
        `${set.padEnd(8)} ${policy.padEnd(16)} ÷best single: median ${r.median} p90 ${r.p90} worst ${r.worst} | ÷optimal: median ${o.median} worst ${o.worst} | ` +
          `extra req ${s.extra_requests_pct.mean}% bytes ${s.extra_bytes_pct.mean}% | failed ${s.failed_requests} | ≤ freecdn ${s.share_no_worse_than_freecdn}`,
      );
    }
  }
}
