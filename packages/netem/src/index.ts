/**
 * @webpp/netem: a user-space link emulator for evaluating webpp on loopback. Each instance
 * is an HTTP-aware proxy on its own port in front of one replica server, adding seeded
 * round-trip delay with jitter, bandwidth limits, stalls and outages from a scenario file.
 * The pure model (scenario format, random source, distributions) is also at
 * '@webpp/netem/model', which the simulator shares.
 */
export * from './model/index.js';
export { Timeline } from './timeline.js';
export { isLoopbackHost } from './loopback.js';
export {
  startLinkEmulator,
  type LinkEmulator,
  type LinkEmulatorEvents,
  type LinkEmulatorOptions,
  type LinkEmulatorStats,
  type LinkUpdate,
  type OutageEvent,
  type RequestOutcome,
  type RequestRecord,
} from './link-emulator.js';
export { startScenarioEmulators, type ScenarioEmulators, type ScenarioEmulatorsOptions } from './scenario-emulators.js';
export { BUILTIN_SCENARIOS, SCENARIOS_DIR, listScenarioFiles, loadScenario, loadScenarioFile, type BuiltinScenarioName } from './scenario-files.js';
