/**
 * Generated worlds in real Chromium (issue 22 §1, §3): a stratified sample of the world
 * generator's seeds (evaluation/generated/sample.ts: 12 training and 24 held-out worlds,
 * fixed in code), each run three times, with webpp (the worker's default), freecdn (npm
 * freecdn-js, its loader and worker), every replica fetched directly from the page with no
 * worker (`direct-<server>`), and optimal-complete. `npm run bench evaluation` runs it after
 * the nine scenarios (evaluation.bench.ts).
 *
 *   npm run bench evaluation-generated                 the full sample, 3 runs (about 2 h here)
 *   npm run bench evaluation-generated -- --quick      3 small training worlds, 1 run (a few minutes)
 *   npm run bench evaluation-generated -- --runs 1     the full sample once
 *   npm run bench evaluation-generated -- --training-only
 *   npm run bench evaluation-generated -- --seeds 6,900018
 *
 * Writes docs/benchmarks/evaluation-generated.{json,md} and evaluation-generated-cdf.svg (the
 * CDF of relative_to_best_single over the held-out worlds for webpp, webpp-paper and freecdn,
 * as generalization-cdf.svg is for the simulator) for the full sample; any other selection
 * writes evaluation-generated-partial.* (git-ignored). Rows as generalization.json's
 * (seed, held_out, policy, mean_ms, p95_ms, relative_to_optimal_complete,
 * relative_to_best_single, extra_requests_pct, extra_bytes_pct, failed_requests, page_mean_ms),
 * medians over the runs with ranges.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { chromium } from '@playwright/test';
import { generateWorld } from '@webpp/netem';
import { ratioCdfSvg } from '@webpp/simulator';
import { chromiumLaunchOptions } from '../support/chromium.js';
import { engineLabel } from './evaluation/engine-label.js';
import { generatedPolicies } from './evaluation/generated/policies.js';
import { FULL_SAMPLE, generatedSample, quickSample, stratumOf } from './evaluation/generated/sample.js';
import type { SampledWorld } from './evaluation/generated/sample.js';
import { foldRuns, worldRows } from './evaluation/generated/rows.js';
import type { GeneratedRow } from './evaluation/generated/rows.js';
import { generatedGoals, generatedMarkdown, summarizeGenerated } from './evaluation/generated/report.js';
import { runWorld } from './evaluation/generated/world-run.js';

const root = new URL('../../', import.meta.url).pathname;
const { values } = parseArgs({
  args: process.argv.slice(2),
  options: { runs: { type: 'string' }, quick: { type: 'boolean' }, 'training-only': { type: 'boolean' }, seeds: { type: 'string' } },
  strict: true,
});
const runs = Number(values.runs ?? (values.quick ? 1 : 3));
if (!(Number.isInteger(runs) && runs >= 1 && runs <= 5)) throw new RangeError(`--runs must be an integer in [1, 5] (got ${values.runs})`);

/** A world's time budget in the browser: no page starts after twice its estimated run plus 10 s, at most 70 s. */
const deadlineOf = (horizonMs: number): number => Math.min(2 * horizonMs + 10_000, 70_000);
/** A request gives up after the world's own timeout, at most 60 s (a bound on the run; the worlds' own is 300 s). */
const MAX_REQUEST_TIMEOUT_MS = 60_000;

let sample: SampledWorld[] = values.quick ? quickSample() : generatedSample(FULL_SAMPLE);
// Held-out worlds first: the goals are judged on them, so a run stopped part-way has them.
sample = [...sample.filter((world) => world.heldOut), ...sample.filter((world) => !world.heldOut)];
const whole = !values.quick && !values['training-only'] && values.seeds === undefined;
if (values['training-only']) sample = sample.filter((world) => !world.heldOut);
if (values.seeds !== undefined) {
  sample = values.seeds.split(',').map((text) => {
    const world = generateWorld(Number(text));
    return { seed: world.seed, heldOut: world.heldOut, stratum: stratumOf(world) };
  });
}
const engine = engineLabel(root);
const command = `npm run bench evaluation-generated${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`;
console.log(`${sample.length} worlds (${sample.filter((world) => world.heldOut).length} held out) × ${runs} run(s); engine ${engine}`);

const started = performance.now();
const browser = await chromium.launch(chromiumLaunchOptions);
const chromiumVersion = browser.version();
const runRows: GeneratedRow[][] = [];
/** Worlds whose run failed (setup or harness), by run: reported in the JSON, never silently left out. */
const skipped: { run: number; seed: number; error: string }[] = [];
try {
  for (let run = 0; run < runs; run++) {
    const rows: GeneratedRow[] = [];
    for (const [index, sampled] of sample.entries()) {
      const world = generateWorld(sampled.seed);
      const policies = generatedPolicies(Object.keys(world.scenario.servers));
      const deadlineMs = deadlineOf(world.scenario.durationMs);
      console.log(`\nrun ${run + 1}/${runs}, world ${index + 1}/${sample.length}: seed ${sampled.seed} (${sampled.heldOut ? 'held out' : 'training'}, ${sampled.stratum}; ${world.traits.join(' ')}), ${policies.length} policies, deadline ${deadlineMs / 1000} s`);
      const worldStarted = performance.now();
      let measured;
      try {
        measured = await runWorld({ browser, world, policies, deadlineMs, requestTimeoutMs: Math.min(world.workload.requestTimeoutMs, MAX_REQUEST_TIMEOUT_MS), log: (line) => console.log(line) });
      } catch (error) {
        // One world's setup failing (a browser context, a replica) must not lose the others: it is named in the results.
        console.log(`  SKIPPED: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`);
        skipped.push({ run: run + 1, seed: sampled.seed, error: error instanceof Error ? error.message.split('\n')[0]! : String(error) });
        continue;
      }
      const mine = worldRows({ seed: sampled.seed, heldOut: sampled.heldOut, stratum: sampled.stratum, shape: world.workload.shape }, measured);
      for (const row of mine) {
        console.log(
          `  ${row.policy.padEnd(17)} n=${String(row.requests).padStart(4)} mean ${row.mean_ms.toFixed(0).padStart(6)} ms p95 ${row.p95_ms.toFixed(0).padStart(6)}` +
            `${row.page_mean_ms === undefined ? '' : ` page ${row.page_mean_ms.toFixed(0).padStart(6)}`}  ÷best ${row.relative_to_best_single.toFixed(3)} ÷opt ${row.relative_to_optimal_complete.toFixed(3)}` +
            `  extra ${row.extra_requests_pct}% / ${row.extra_bytes_pct}% B  failed ${row.failed_requests}`,
        );
      }
      console.log(`  (${((performance.now() - worldStarted) / 1000).toFixed(0)} s)`);
      rows.push(...mine);
      // Every world's rows are written as they come (a stopped run keeps what it measured).
      write([...runRows, rows], false);
    }
    runRows.push(rows);
    write(runRows, whole && run === runs - 1);
  }
} finally {
  await browser.close();
}

function write(done: readonly (readonly GeneratedRow[])[], final: boolean): void {
  const rows = foldRuns(done.filter((list) => list.length > 0));
  const summary = summarizeGenerated(rows);
  const info = { command, runs: done.length, engine, chromium: chromiumVersion, wallSeconds: (performance.now() - started) / 1000 };
  const document = {
    info: { ...info, sample: sample.map((world) => ({ ...world })), skipped, deadline: 'no page starts after 2 × the generator\'s estimated run + 10 s (at most 70 s); a request gives up after 60 s' },
    summary,
    goals: generatedGoals(summary),
    rows,
  };
  const base = final ? 'evaluation-generated' : 'evaluation-generated-partial';
  const out = resolve(root, 'docs/benchmarks');
  mkdirSync(out, { recursive: true });
  writeFileSync(resolve(out, `${base}.json`), `${JSON.stringify(document, null, 1)}\n`);
  writeFileSync(resolve(out, `${base}.md`), generatedMarkdown(rows, summary, info));
  const heldOut = rows.filter((row) => row.held_out);
  if (heldOut.length === 0) return;
  const series = ['webpp', 'webpp-paper', 'freecdn'].map((policy) => ({ policy, values: heldOut.filter((row) => row.policy === policy).map((row) => row.relative_to_best_single) }));
  const worlds = new Set(heldOut.map((row) => row.seed)).size;
  const title = `Held-out worlds in Chromium (${worlds}): mean response time relative to the best single replica fetched directly`;
  writeFileSync(resolve(out, `${base}-cdf.svg`), ratioCdfSvg(series, title, 'mean ÷ best direct single replica\'s mean (log scale; left of the dashed line: better than the best single)'));
}
console.log(`\nwrote docs/benchmarks/${whole ? 'evaluation-generated' : 'evaluation-generated-partial'}.{json,md} (${Math.round((performance.now() - started) / 1000)} s)`);
