/** Loading scenario files: the shipped ones by name, or any JSON file by path. */
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { NetemError } from './model/errors.js';
import { parseScenario, type Scenario } from './model/scenario.js';

/** Directory of the shipped scenarios (packages/netem/scenarios). */
export const SCENARIOS_DIR: string = fileURLToPath(new URL('../scenarios/', import.meta.url));

/** The shipped scenarios, in the order reports list them. */
export const BUILTIN_SCENARIOS = ['peak', 'evening', 'outage', 'degradation', 'tail-stalls', 'slow-body', 'flapping', 'rotating', 'recovery'] as const;
export type BuiltinScenarioName = (typeof BUILTIN_SCENARIOS)[number];

/** Names of every scenario file in SCENARIOS_DIR. */
export function listScenarioFiles(): string[] {
  return readdirSync(SCENARIOS_DIR)
    .filter((name) => name.endsWith('.json'))
    .map((name) => name.slice(0, -'.json'.length))
    .sort();
}

/** Reads and validates a scenario file. */
export function loadScenarioFile(path: string): Scenario {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new NetemError('WEBPP_ERR_NETEM_SCENARIO', `cannot read scenario file ${path}: ${(error as Error).message}`, { cause: error });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new NetemError('WEBPP_ERR_NETEM_SCENARIO', `${path} is not valid JSON: ${(error as Error).message}`, { cause: error });
  }
  try {
    return parseScenario(json);
  } catch (error) {
    if (error instanceof NetemError) throw new NetemError(error.code, `${path}: ${error.message}`, { cause: error });
    throw error;
  }
}

/** A shipped scenario by name ("peak"), or a scenario file by path (anything with a "/" or ".json"). */
export function loadScenario(nameOrPath: string): Scenario {
  if (nameOrPath.includes('/') || nameOrPath.endsWith('.json')) return loadScenarioFile(nameOrPath);
  if (!/^[a-z0-9-]+$/i.test(nameOrPath)) throw new NetemError('WEBPP_ERR_NETEM_SCENARIO', `bad scenario name "${nameOrPath}"`);
  const available = listScenarioFiles();
  if (!available.includes(nameOrPath)) {
    throw new NetemError('WEBPP_ERR_NETEM_SCENARIO', `no scenario "${nameOrPath}" (shipped: ${available.join(', ')})`);
  }
  return loadScenarioFile(`${SCENARIOS_DIR}${nameOrPath}.json`);
}
