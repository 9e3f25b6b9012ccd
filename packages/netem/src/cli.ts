#!/usr/bin/env node
/**
 * webpp-netem: put each server of a scenario behind a link emulator.
 *
 *   webpp-netem --scenario peak --upstream A=http://127.0.0.1:8081 --upstream B=... [--seed 7]
 *   webpp-netem --validate path/to/scenario.json
 *
 * Prints one JSON line per emulator ({ server, url, upstream }) and runs until SIGINT/SIGTERM.
 */
import { parseArgs } from 'node:util';
import { NetemError } from './model/errors.js';
import { scaleScenarioTime } from './model/scenario.js';
import { startScenarioEmulators } from './scenario-emulators.js';
import { loadScenario } from './scenario-files.js';

const USAGE = `usage: webpp-netem --scenario NAME|FILE --upstream NAME=URL [--upstream NAME=URL ...]
                   [--seed SEED] [--time-scale FACTOR] [--host 127.0.0.1]
       webpp-netem --validate FILE`;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      scenario: { type: 'string' },
      upstream: { type: 'string', multiple: true },
      seed: { type: 'string' },
      'time-scale': { type: 'string' },
      host: { type: 'string' },
      validate: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    console.log(USAGE);
    return;
  }
  if (values.validate !== undefined) {
    const scenario = loadScenario(values.validate);
    console.log(`ok: scenario "${scenario.name}" with servers ${Object.keys(scenario.servers).join(', ')}`);
    return;
  }
  if (values.scenario === undefined || !values.upstream?.length) throw new NetemError('WEBPP_ERR_NETEM_OPTIONS', USAGE);
  let scenario = loadScenario(values.scenario);
  if (values['time-scale'] !== undefined) scenario = scaleScenarioTime(scenario, Number(values['time-scale']));
  const upstreams: Record<string, string> = {};
  for (const pair of values.upstream) {
    const at = pair.indexOf('=');
    if (at <= 0) throw new NetemError('WEBPP_ERR_NETEM_OPTIONS', `--upstream wants NAME=URL, got "${pair}"`);
    upstreams[pair.slice(0, at)] = pair.slice(at + 1);
  }
  const seed = values.seed === undefined ? undefined : /^-?\d+$/.test(values.seed) ? Number(values.seed) : values.seed;
  const set = await startScenarioEmulators({
    scenario,
    upstreams,
    ...(seed !== undefined ? { seed } : {}),
    ...(values.host !== undefined ? { host: values.host } : {}),
  });
  for (const [server, emulator] of Object.entries(set.emulators)) {
    console.log(JSON.stringify({ server, url: emulator.url, upstream: emulator.upstream.href }));
    emulator.events.on('outage', (event) => console.error(`[${event.atMs.toFixed(0)} ms] ${server}: outage ${event.previous ?? 'up'} → ${event.current ?? 'up'}`));
  }
  const stop = (): void => {
    void set.close().then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((error: unknown) => {
  console.error(error instanceof NetemError ? `${error.code}: ${error.message}` : error);
  process.exit(1);
});
