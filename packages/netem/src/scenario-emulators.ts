/**
 * One emulator per replica server of a scenario, all on one shared timeline: the harness
 * for real-browser runs (each replica behind its own port, reached as NAME.localhost:PORT).
 */
import type { SeedPart } from './model/random.js';
import { NetemError } from './model/errors.js';
import { parseScenario, type Scenario } from './model/scenario.js';
import { startLinkEmulator, type LinkEmulator, type LinkEmulatorOptions } from './link-emulator.js';
import { Timeline } from './timeline.js';

export interface ScenarioEmulatorsOptions extends Pick<LinkEmulatorOptions, 'host' | 'preserveHost' | 'keepAliveTimeoutMs'> {
  /** A parsed Scenario, or raw scenario JSON to validate. */
  scenario: unknown;
  /** Upstream URL of every server of the scenario, by server name. */
  upstreams: Record<string, string | URL>;
  /** Default: the scenario's seed, else 0. */
  seed?: SeedPart;
  timeline?: Timeline;
}

export interface ScenarioEmulators {
  scenario: Scenario;
  timeline: Timeline;
  /** By server name, in the scenario's order. */
  emulators: Record<string, LinkEmulator>;
  /** Restarts the shared timeline: scenario time 0 is now. */
  restart(): void;
  close(): Promise<void>;
}

export async function startScenarioEmulators(options: ScenarioEmulatorsOptions): Promise<ScenarioEmulators> {
  const scenario = parseScenario(options.scenario);
  const timeline = options.timeline ?? new Timeline();
  const names = Object.keys(scenario.servers);
  const missing = names.filter((name) => options.upstreams[name] === undefined);
  if (missing.length > 0) throw new NetemError('WEBPP_ERR_NETEM_OPTIONS', `no upstream for server(s) ${missing.join(', ')}`);
  const extra = Object.keys(options.upstreams).filter((name) => !names.includes(name));
  if (extra.length > 0) throw new NetemError('WEBPP_ERR_NETEM_OPTIONS', `scenario "${scenario.name}" has no server(s) ${extra.join(', ')}`);
  const emulators: Record<string, LinkEmulator> = {};
  try {
    for (const name of names) {
      const emulatorOptions: LinkEmulatorOptions = { upstream: options.upstreams[name]!, scenario, server: name, timeline };
      if (options.seed !== undefined) emulatorOptions.seed = options.seed;
      if (options.host !== undefined) emulatorOptions.host = options.host;
      if (options.preserveHost !== undefined) emulatorOptions.preserveHost = options.preserveHost;
      if (options.keepAliveTimeoutMs !== undefined) emulatorOptions.keepAliveTimeoutMs = options.keepAliveTimeoutMs;
      emulators[name] = await startLinkEmulator(emulatorOptions);
    }
  } catch (error) {
    await Promise.all(Object.values(emulators).map((emulator) => emulator.close()));
    throw error;
  }
  return {
    scenario,
    timeline,
    emulators,
    restart: () => timeline.restart(),
    close: async () => {
      await Promise.all(Object.values(emulators).map((emulator) => emulator.close()));
    },
  };
}
