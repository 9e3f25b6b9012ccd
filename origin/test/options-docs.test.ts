/**
 * The option tables in the docs are generated from the option schemas (npm run
 * docs:options). This fails when someone edits a schema (a default, a description, a new
 * option) without regenerating the docs, or edits a generated table by hand.
 */
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { BLOCKS, optionsTable, outOfDate, regenerate, workerOptionsTable } from '../../scripts/docs-options.js';
import { WORKER_OPTION_SCHEMA } from '../../sw/src/options-schema.js';
import { pluginOptionsSchema } from '../src/options/plugin-schema.js';
import { Type } from 'typebox';

describe('generated option tables', () => {
  it('match the schemas (run `npm run docs:options` after changing an option)', () => {
    expect(outOfDate()).toEqual([]);
  });

  it('would notice a changed default or a hand-edited row', () => {
    const changed = Type.Object({ ...pluginOptionsSchema.properties, maxReplicaBytes: Type.Optional(Type.Integer({ default: 1, description: 'changed' })) });
    expect(optionsTable(changed)).not.toBe(optionsTable(pluginOptionsSchema));
    const file = BLOCKS.find((candidate) => candidate.id === 'plugin-options')!.file;
    const current = readFileSync(fileURLToPath(new URL(`../../${file}`, import.meta.url)), 'utf8');
    const edited = current.replace('| `maxReplicaBytes` | `52428800` (50 MiB) |', '| `maxReplicaBytes` | 100 MiB |');
    expect(edited).not.toBe(current);
    expect(regenerate(file, edited)).toBe(current);
  });

  it('would notice a hand-edited row of the worker options, and list every public worker option once', () => {
    const file = BLOCKS.find((candidate) => candidate.id === 'worker-options')!.file;
    const current = readFileSync(fileURLToPath(new URL(`../../${file}`, import.meta.url)), 'utf8');
    const edited = current.replace('| `controlCheckMs` (`data-control-check-ms`) | `60000` (1 min) |', '| `controlCheckMs` (`data-control-check-ms`) | `30000` |');
    expect(edited).not.toBe(current);
    expect(regenerate(file, edited)).toBe(current);
    const rows = workerOptionsTable().split('\n');
    for (const name of Object.keys(WORKER_OPTION_SCHEMA)) expect(rows.filter((row) => row.startsWith(`| \`${name}\` (`))).toHaveLength(1);
  });

  it('list every option of the schema once, with its default and flag', () => {
    const table = optionsTable(pluginOptionsSchema);
    const rows = table.split('\n');
    for (const name of Object.keys(pluginOptionsSchema.properties)) expect(rows.filter((row) => row.startsWith(`| \`${name}\` |`))).toHaveLength(1);
    expect(table).toContain('| `publicUrl` | **required** |');
    expect(table).toContain('CLI `--max-replica-bytes`');
    expect(table).toContain('CLI `--no-inject`');
  });
});
