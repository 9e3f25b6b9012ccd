/**
 * Writes the option tables of the docs from the option schemas, between marker comments:
 *
 *   <!-- generated:plugin-options -->
 *   …table…
 *   <!-- /generated:plugin-options -->
 *
 * `npm run docs:options` rewrites them; origin/test/options-docs.test.ts fails when a
 * table and its schema disagree. Tables: the origin plugin's, startReplicaServer's and
 * batching options, `webpp-origin --help`, the origin's response path (its hooks in the order
 * Fastify runs them, origin/src/compose/response-path.ts), and the netem scenario format. The schemas are the one definition of every option.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { TObject } from 'typebox';
import { pluginOptionsSchema } from '../origin/src/options/plugin-schema.js';
import { serverOptionsSchema } from '../origin/src/options/server-schema.js';
import { batchOptionsSchema } from '../origin/src/batch/batch-options.js';
import { defaultMarkdown, type AnnotatedSchema } from '../origin/src/options/describe.js';
import { HELP } from '../origin/src/cli.js';
import {
  BrownoutWindowSchema,
  DistributionSchema,
  LinkSchema,
  OutageWindowSchema,
  ScenarioSchema,
  ScheduleEntrySchema,
  ServerScenarioSchema,
  StallSchema,
  WorkloadSchema,
} from '../packages/netem/src/model/scenario-schema.js';
import { FLAGS } from '../origin/src/options/cli-flags.js';
import { responsePathMarkdown } from '../origin/src/compose/response-path.js';
import { INTERNAL_CONSTANTS, removedFlag } from '../origin/src/options/internals.js';

/** The options that became constants (issue 24): name, former flag, value. */
function removedOptionsTable(): string {
  const rows = Object.entries(INTERNAL_CONSTANTS).map(([name, value]) => `| \`${name}\` | \`--${removedFlag(name)}\` | \`${value}\` |`);
  return ['| removed option | removed flag | constant value |', '| --- | --- | --- |', ...rows].join('\n');
}

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** A Markdown table of an options schema: option | default | meaning. */
export function optionsTable(schema: TObject, path: string[] = []): string {
  const required = new Set((schema as TObject & { required?: string[] }).required ?? []);
  const rows = Object.entries(schema.properties).map(([name, property]) => {
    const option = property as AnnotatedSchema;
    const fallback = required.has(name) ? '**required**' : (defaultMarkdown(name, option) ?? 'none');
    const spec = FLAGS.find((candidate) => candidate.path.join('.') === [...path, name].join('.'));
    const cliDefault = spec?.cli.default === undefined ? '' : ` (default \`${String(spec.cli.default)}\`)`;
    const env = spec?.cli.env === undefined ? '' : ` or \`$${spec.cli.env}\``;
    const flag = spec === undefined ? '' : ` CLI \`--${spec.flag}\`${env}${cliDefault}.`;
    return `| \`${name}\` | ${fallback} | ${(option.description ?? '').replace(/\|/g, '\\|')}${flag} |`;
  });
  return ['| option | default | meaning |', '| --- | --- | --- |', ...rows].join('\n');
}

/** The scenario format as one table: every field by its path in the file. */
export function scenarioTable(): string {
  const objects: Array<[string, TObject]> = [
    ['', ScenarioSchema],
    ['servers.<name>.', ServerScenarioSchema],
    ['servers.<name>.link.', LinkSchema],
    ['servers.<name>.link.stall.', StallSchema],
    ['servers.<name>.schedule[].', ScheduleEntrySchema],
    ['servers.<name>.outages[].', OutageWindowSchema],
    ['servers.<name>.brownouts[].', BrownoutWindowSchema],
    ['workload.', WorkloadSchema],
    ['<duration>.', DistributionSchema],
  ];
  const rows = objects.flatMap(([prefix, schema]) => {
    const required = new Set((schema as TObject & { required?: string[] }).required ?? []);
    return Object.entries(schema.properties).map(([name, property]) => {
      const field = property as AnnotatedSchema;
      const fallback = required.has(name) ? '**required**' : (defaultMarkdown(name, field) ?? 'none');
      return `| \`${prefix}${name}\` | ${fallback} | ${(field.description ?? '').replace(/\|/g, '\\|')} |`;
    });
  });
  return ['| field | default | meaning |', '| --- | --- | --- |', ...rows].join('\n');
}

interface GeneratedBlock {
  file: string;
  id: string;
  content: () => string;
}

export const BLOCKS: GeneratedBlock[] = [
  { file: 'docs/origin.md', id: 'plugin-options', content: () => optionsTable(pluginOptionsSchema) },
  { file: 'docs/origin.md', id: 'server-options', content: () => optionsTable(serverOptionsSchema) },
  { file: 'docs/origin.md', id: 'response-path', content: responsePathMarkdown },
  { file: 'docs/origin.md', id: 'removed-options', content: removedOptionsTable },
  { file: 'docs/origin.md', id: 'cli-help', content: () => `\`\`\`\n${HELP.trimEnd()}\n\`\`\`` },
  { file: 'docs/batching.md', id: 'batch-options', content: () => optionsTable(batchOptionsSchema, ['batch']) },
  { file: 'docs/evaluation.md', id: 'scenario-fields', content: scenarioTable },
];

function markers(id: string): [string, string] {
  return [`<!-- generated:${id} (npm run docs:options) -->`, `<!-- /generated:${id} -->`];
}

/** The file's text with every block of it regenerated; throws when a block's markers are missing. */
export function regenerate(file: string, text: string): string {
  let result = text;
  for (const block of BLOCKS.filter((candidate) => candidate.file === file)) {
    const [start, end] = markers(block.id);
    const from = result.indexOf(start);
    const to = result.indexOf(end);
    if (from === -1 || to < from) throw new Error(`${file}: markers ${start} … ${end} not found`);
    result = `${result.slice(0, from + start.length)}\n${block.content()}\n${result.slice(to)}`;
  }
  return result;
}

/** Files whose generated blocks differ from the schemas. */
export function outOfDate(): string[] {
  const files = [...new Set(BLOCKS.map((block) => block.file))];
  return files.filter((file) => {
    const text = readFileSync(`${ROOT}/${file}`, 'utf8');
    return regenerate(file, text) !== text;
  });
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  for (const file of [...new Set(BLOCKS.map((block) => block.file))]) {
    const path = `${ROOT}/${file}`;
    const text = readFileSync(path, 'utf8');
    const next = regenerate(file, text);
    if (next !== text) writeFileSync(path, next);
    process.stdout.write(`${file}: ${next === text ? 'up to date' : 'updated'}\n`);
  }
}
