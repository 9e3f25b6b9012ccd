/**
 * Writes the evaluation's tables into the docs from docs/benchmarks/results.json (the
 * medians of the last `npm run bench evaluation` run), between marker comments:
 *
 *   <!-- generated:evaluation-cells (npm run docs:evaluation) -->
 *   …table…
 *   <!-- /generated:evaluation-cells -->
 *
 * Blocks: the per-policy cells and the goals table of docs/evaluation.md ("Results of issue
 * 11"), and the README's summary of the goals; when and on what code the run was made
 * (results-runs.json); issue 22's tables against the best direct single replica and freecdn
 * (docs-regret.ts), and the generated worlds in Chromium (evaluation-generated.json). The tables are made by
 * docs-tables.ts, the same code that writes them into results.md. `outOfDate()` names the
 * files whose blocks differ from the committed results (docs-evaluation.test.ts fails then).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { generatedSummaryMarkdown, generatedWorldsMarkdown, regretCellsMarkdown, regretGoalsMarkdown, runLineMarkdown } from './docs-regret.js';
import type { GeneratedDocument } from './docs-regret.js';
import { goalsTableMarkdown, policyCellsMarkdown, readmeSummaryMarkdown } from './docs-tables.js';
import type { RunInfo } from './report.js';
import type { ResultRow } from './rows.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

function blocks(): { file: string; id: string; lines: string[] }[] {
  const rows = JSON.parse(readFileSync(`${ROOT}/docs/benchmarks/results.json`, 'utf8')) as ResultRow[];
  const { info } = JSON.parse(readFileSync(`${ROOT}/docs/benchmarks/results-runs.json`, 'utf8')) as { info: RunInfo };
  const generatedFile = `${ROOT}/docs/benchmarks/evaluation-generated.json`;
  const generated = existsSync(generatedFile) ? (JSON.parse(readFileSync(generatedFile, 'utf8')) as GeneratedDocument) : undefined;
  const scenarios = [...new Set(rows.map((row) => row.scenario))];
  return [
    { file: 'docs/evaluation.md', id: 'evaluation-run', lines: runLineMarkdown(info) },
    { file: 'docs/evaluation.md', id: 'evaluation-cells', lines: policyCellsMarkdown(rows, scenarios) },
    { file: 'docs/evaluation.md', id: 'evaluation-goals', lines: goalsTableMarkdown(rows) },
    { file: 'docs/evaluation.md', id: 'evaluation-regret-goals', lines: regretGoalsMarkdown(rows) },
    { file: 'docs/evaluation.md', id: 'evaluation-regret-cells', lines: regretCellsMarkdown(rows) },
    { file: 'docs/evaluation.md', id: 'evaluation-generated', lines: generatedSummaryMarkdown(generated) },
    { file: 'docs/evaluation.md', id: 'evaluation-generated-worlds', lines: generatedWorldsMarkdown(generated) },
    { file: 'README.md', id: 'evaluation-run', lines: runLineMarkdown(info) },
    { file: 'README.md', id: 'evaluation-summary', lines: readmeSummaryMarkdown(rows) },
    { file: 'README.md', id: 'evaluation-regret-goals', lines: regretGoalsMarkdown(rows) },
    { file: 'README.md', id: 'evaluation-generated', lines: generatedSummaryMarkdown(generated) },
  ];
}

/** Each file with its generated blocks: its text now, and with the blocks regenerated. */
function regenerated(): { file: string; before: string; after: string }[] {
  const all = blocks();
  return [...new Set(all.map((block) => block.file))].map((file) => {
    const before = readFileSync(`${ROOT}/${file}`, 'utf8');
    let after = before;
    for (const { id, lines } of all.filter((block) => block.file === file)) {
      const pattern = new RegExp(`(<!-- generated:${id} \\(npm run docs:evaluation\\) -->\\n)[\\s\\S]*?(<!-- /generated:${id} -->)`);
      if (!pattern.test(after)) throw new Error(`${file}: no block ${id} (markers <!-- generated:${id} (npm run docs:evaluation) --> … <!-- /generated:${id} -->)`);
      after = after.replace(pattern, (_match, start: string, end: string) => `${start}${lines.join('\n')}\n${end}`);
    }
    return { file, before, after };
  });
}

/** Files whose generated blocks differ from docs/benchmarks/results.json. */
export function outOfDate(): string[] {
  return regenerated().filter(({ before, after }) => before !== after).map(({ file }) => file);
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  for (const { file, before, after } of regenerated()) {
    if (after !== before) writeFileSync(`${ROOT}/${file}`, after);
    process.stdout.write(`${file}: ${after === before ? 'up to date' : 'updated'}\n`);
  }
}
