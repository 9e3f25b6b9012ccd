/**
 * Writes the evaluation's tables into the docs from docs/benchmarks/results.json (the
 * medians of the last `npm run bench evaluation` run), between marker comments:
 *
 *   <!-- generated:evaluation-cells (npm run docs:evaluation) -->
 *   …table…
 *   <!-- /generated:evaluation-cells -->
 *
 * Blocks: the per-policy cells and the goals table of docs/evaluation.md ("Results of issue
 * 11"), and the README's summary of the goals. The tables are made by
 * docs-tables.ts, the same code that writes them into results.md.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { goalsTableMarkdown, policyCellsMarkdown, readmeSummaryMarkdown } from './docs-tables.js';
import type { ResultRow } from './rows.js';

const ROOT = new URL('../../../', import.meta.url).pathname;
const rows = JSON.parse(readFileSync(`${ROOT}/docs/benchmarks/results.json`, 'utf8')) as ResultRow[];
const scenarios = [...new Set(rows.map((row) => row.scenario))];

const BLOCKS: { file: string; id: string; lines: string[] }[] = [
  { file: 'docs/evaluation.md', id: 'evaluation-cells', lines: policyCellsMarkdown(rows, scenarios) },
  { file: 'docs/evaluation.md', id: 'evaluation-goals', lines: goalsTableMarkdown(rows) },
  { file: 'README.md', id: 'evaluation-summary', lines: readmeSummaryMarkdown(rows) },
];

for (const file of [...new Set(BLOCKS.map((block) => block.file))]) {
  const before = readFileSync(`${ROOT}/${file}`, 'utf8');
  let text = before;
  for (const { id, lines } of BLOCKS.filter((block) => block.file === file)) {
    const pattern = new RegExp(`(<!-- generated:${id} \\(npm run docs:evaluation\\) -->\\n)[\\s\\S]*?(<!-- /generated:${id} -->)`);
    if (!pattern.test(text)) throw new Error(`${file}: no block ${id} (markers <!-- generated:${id} (npm run docs:evaluation) --> … <!-- /generated:${id} -->)`);
    text = text.replace(pattern, (_match, start: string, end: string) => `${start}${lines.join('\n')}\n${end}`);
  }
  if (text !== before) writeFileSync(`${ROOT}/${file}`, text);
  process.stdout.write(`${file}: ${text === before ? 'up to date' : 'updated'}\n`);
}
