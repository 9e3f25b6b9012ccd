#!/usr/bin/env node
/**
 * webpp-sim: run the simulator from the command line.
 *
 *   webpp-sim run   [--scenario NAME|FILE ...] [--policy NAME ...] [--seed S] [--clients N]
 *                   [--requests-per-client N] [--duration-ms MS] [--service-ms MS]
 *                   [--json FILE] [--markdown FILE]
 *   webpp-sim sweep [--scenario NAME|FILE ...] [--base fast|paper ...] [--seeds 1,2,3] [--grid]
 *                   [--json FILE] [--markdown FILE]
 *
 * Without --json/--markdown the markdown report goes to stdout.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import { FAST_PRESET, PAPER_DEFAULTS } from '@webpp/core';
import { BUILTIN_SCENARIOS, loadScenario, serverNames, type WorkloadSpec } from '@webpp/netem';
import { comparePolicies, policyByName, standardPolicies } from './compare.js';
import { comparisonMarkdown, sweepMarkdown } from './report.js';
import { DEFAULT_SWEEP_BASES, runSweep, type SweepBase } from './sweep.js';

const USAGE = `usage: webpp-sim run   [--scenario NAME|FILE ...] [--policy NAME ...] [--seed S] [--clients N]
                     [--requests-per-client N] [--duration-ms MS] [--service-ms MS] [--json FILE] [--markdown FILE]
       webpp-sim sweep [--scenario NAME|FILE ...] [--base fast|paper ...] [--seeds 1,2,3] [--grid]
                     [--json FILE] [--markdown FILE]
scenarios: ${BUILTIN_SCENARIOS.join(', ')} (default: all) or a scenario file
policies: single-<server>, random, round-robin, webpp-paper, webpp-fast, webpp-fast-midbody, optimal, hedged, oracle`;

function positiveNumber(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  const number = Number(value);
  if (!Number.isFinite(number) || number < 0) throw new RangeError(`--${name} wants a number ≥ 0, got "${value}"`);
  return number;
}

function seedOf(value: string): string | number {
  return /^-?\d+$/.test(value) ? Number(value) : value;
}

function write(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
  console.error(`wrote ${path}`);
}

function main(): void {
  const [command, ...rest] = process.argv.slice(2);
  if (command !== 'run' && command !== 'sweep') {
    console.log(USAGE);
    process.exit(command === undefined || command === '--help' || command === '-h' ? 0 : 1);
  }
  const { values } = parseArgs({
    args: rest,
    options: {
      scenario: { type: 'string', multiple: true },
      policy: { type: 'string', multiple: true },
      seed: { type: 'string' },
      seeds: { type: 'string' },
      base: { type: 'string', multiple: true },
      grid: { type: 'boolean' },
      clients: { type: 'string' },
      'requests-per-client': { type: 'string' },
      'duration-ms': { type: 'string' },
      'service-ms': { type: 'string' },
      json: { type: 'string' },
      markdown: { type: 'string' },
    },
  });
  const scenarios = (values.scenario ?? [...BUILTIN_SCENARIOS]).map((name) => loadScenario(name));
  const workload: WorkloadSpec = {};
  const clients = positiveNumber(values.clients, 'clients');
  if (clients !== undefined) workload.clients = clients;
  const requests = positiveNumber(values['requests-per-client'], 'requests-per-client');
  if (requests !== undefined) workload.requestsPerClient = requests;
  const durationMs = positiveNumber(values['duration-ms'], 'duration-ms');
  if (durationMs !== undefined) workload.durationMs = durationMs;
  const serviceMs = positiveNumber(values['service-ms'], 'service-ms');

  let json: unknown;
  let markdown: string;
  if (command === 'run') {
    const comparisons = comparePolicies({
      scenarios,
      policies: values.policy ? (servers) => values.policy!.map((name) => policyByName(name, servers)) : standardPolicies,
      ...(values.seed !== undefined ? { seed: seedOf(values.seed) } : {}),
      workload,
      ...(serviceMs !== undefined ? { serviceMs } : {}),
    });
    json = comparisons.flatMap((comparison) => comparison.rows);
    markdown = comparisonMarkdown(comparisons, {
      preamble: `Scenarios: ${scenarios.map((scenario) => `${scenario.name} (servers ${serverNames(scenario).join(', ')})`).join('; ')}.`,
    });
  } else {
    const knownBases: Record<string, SweepBase> = { fast: { name: 'fast', config: FAST_PRESET }, paper: { name: 'paper', config: PAPER_DEFAULTS } };
    const bases = values.base
      ? values.base.map((name) => {
          const base = knownBases[name];
          if (!base) throw new RangeError(`--base wants fast or paper, got "${name}"`);
          return base;
        })
      : DEFAULT_SWEEP_BASES;
    const result = runSweep({
      scenarios,
      bases,
      grid: values.grid ?? false,
      ...(values.seeds !== undefined ? { seeds: values.seeds.split(',').map(seedOf) } : values.seed !== undefined ? { seeds: [seedOf(values.seed)] } : {}),
      workload,
      ...(serviceMs !== undefined ? { serviceMs } : {}),
    });
    json = { optimalMeanMs: result.optimalMeanMs, runs: result.runs, requestsSimulated: result.requestsSimulated, rows: result.rows };
    markdown = sweepMarkdown(result);
  }
  if (values.json) write(values.json, `${JSON.stringify(json, null, 2)}\n`);
  if (values.markdown) write(values.markdown, markdown);
  if (!values.json && !values.markdown) process.stdout.write(markdown);
}

try {
  main();
} catch (error) {
  console.error(error instanceof Error ? `${error.name}: ${error.message}` : error);
  process.exit(1);
}
