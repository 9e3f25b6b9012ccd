/**
 * Writes the option tables of the docs from the option schemas, between marker comments:
 *
 *   <!-- generated:plugin-options -->
 *   …table…
 *   <!-- /generated:plugin-options -->
 *
 * `npm run docs:options` rewrites them; origin/test/options-docs.test.ts fails when a
 * table and its schema disagree. Tables: the origin plugin's, startReplicaServer's,
 * batching, memory-cache, client-aggregate and replication options (each feature's own schema), `webpp-origin --help`, the origin's response path (its hooks in the order
 * Fastify runs them, origin/src/compose/response-path.ts), the netem scenario format, and the worker's
 * options with the options it no longer has (sw/src/options-schema.ts), and the worker's request
 * path (its stages and lifecycle plugins, read from sw/src: scripts/request-path.ts). The schemas are
 * the one definition of every option.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { TObject } from 'typebox';
import { pluginOptionsSchema } from '../origin/src/options/plugin-schema.js';
import { serverOptionsSchema } from '../origin/src/options/server-schema.js';
import { batchOptionsSchema } from '../origin/src/batch/batch-options.js';
import { memoryCacheOptionsSchema } from '../origin/src/features/memory-cache.js';
import { clientAggregateOptionsSchema } from '../origin/src/features/client-aggregate.js';
import { replicationOptionsSchema } from '../origin/src/features/replication.js';
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
import { FAST_PRESET, PAPER_DEFAULTS, WEBPP_DEFAULTS } from '@webpp/core';
import { WORKER_INTERNALS, WORKER_OPTION_SCHEMA, removedOptionNames, type OptionSpec, type PublicOptionName } from '../sw/src/options-schema.js';
import { WORKER_OPTION_DOCS } from '../sw/src/options-docs.js';
import { requestPathMarkdown } from './request-path.js';

/** The origin options that became constants (issue 24): name, former flag, value. */
function removedOriginOptionsTable(): string {
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

const UNITS: Array<[string, number]> = [['d', 86_400_000], ['h', 3_600_000], ['min', 60_000], ['s', 1_000]];

/** A default for the worker's table: `3600000` (1 h), `52428800` (50 MiB). */
function workerDefault(name: string, value: number): string {
  if (/Bytes$/.test(name)) return defaultMarkdown(name, { default: value }) ?? `\`${value}\``;
  const unit = /Ms$/.test(name) ? UNITS.find(([, size]) => value >= size && value % size === 0) : undefined;
  return unit === undefined ? `\`${value}\`` : `\`${value}\` (${value / unit[1]} ${unit[0]})`;
}

/** The worker's public options: option | default | range | when to change it. */
export function workerOptionsTable(): string {
  const rows = (Object.keys(WORKER_OPTION_SCHEMA) as PublicOptionName[]).map((name) => {
    const spec: OptionSpec = WORKER_OPTION_SCHEMA[name];
    let fallback: string;
    let range = '';
    if (spec.kind === 'policy') fallback = `\`${spec.default}\``;
    else if (spec.kind === 'features') fallback = 'none';
    else {
      fallback = workerDefault(name, spec.default);
      if (name in PAPER_DEFAULTS) {
        const key = name as keyof typeof PAPER_DEFAULTS;
        fallback += `; \`paper\` ${workerDefault(name, PAPER_DEFAULTS[key])}, \`fast\` ${workerDefault(name, FAST_PRESET[key])}`;
      }
      range = `${spec.kind === 'integer' ? 'integer ' : ''}[${spec.min}, ${spec.max === Number.MAX_SAFE_INTEGER ? '∞' : spec.max}]`;
    }
    const attribute = `data-${name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
    return `| \`${name}\` (\`${attribute}\`) | ${fallback} | ${range} | ${WORKER_OPTION_DOCS[name].replace(/\|/g, '\\|')} |`;
  });
  return ['| option (attribute) | default | range | when to change it |', '| --- | --- | --- | --- |', ...rows].join('\n');
}

/** The options the worker no longer has: each is ignored with one console warning. */
export function removedWorkerOptionsTable(): string {
  const rows = removedOptionNames().map((name) => {
    let now: string;
    if (name === 'preset') now = 'say it with `policy`: `paper` or `fast` (the `webpp` policy never used a preset)';
    else if (name in WORKER_INTERNALS) now = `worker constant \`WORKER_INTERNALS.${name}\` (sw/src/options-schema.ts)`;
    else if (name in WEBPP_DEFAULTS) now = `webpp policy constant \`WEBPP_DEFAULTS.${name}\` (packages/core/src/policies/webpp)`;
    else now = 'paper\'s policy constant (`PAPER_DEFAULTS` / `FAST_PRESET` in packages/core/src/config.ts): choose `policy` `paper` or `fast`';
    return `| \`${name}\` | ${now} |`;
  });
  return ['| removed option | where its value lives now |', '| --- | --- |', ...rows].join('\n');
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
  { file: 'docs/origin.md', id: 'removed-options', content: removedOriginOptionsTable },
  { file: 'docs/origin.md', id: 'memory-cache-options', content: () => optionsTable(memoryCacheOptionsSchema) },
  { file: 'docs/origin.md', id: 'client-aggregate-options', content: () => optionsTable(clientAggregateOptionsSchema) },
  { file: 'docs/origin.md', id: 'replication-options', content: () => optionsTable(replicationOptionsSchema) },
  { file: 'docs/origin.md', id: 'cli-help', content: () => `\`\`\`\n${HELP.trimEnd()}\n\`\`\`` },
  { file: 'docs/batching.md', id: 'batch-options', content: () => optionsTable(batchOptionsSchema, ['batch']) },
  { file: 'docs/evaluation.md', id: 'scenario-fields', content: scenarioTable },
  { file: 'docs/service-worker.md', id: 'worker-options', content: workerOptionsTable },
  { file: 'docs/service-worker.md', id: 'removed-worker-options', content: removedWorkerOptionsTable },
  { file: 'docs/service-worker.md', id: 'request-path', content: requestPathMarkdown },
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
