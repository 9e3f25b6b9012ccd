/**
 * The scenario file format (docs/evaluation.md): per replica server, a link profile
 * (delay distribution, bandwidth, stalls), a piecewise schedule of changes over time and
 * outage windows; plus an optional workload for the harness. Plain JSON.
 */
import { DISTRIBUTION_NAMES, type DistributionSpec, type DurationSpec } from './distributions.js';
import { NetemError } from './errors.js';

export const SCENARIO_FORMAT_VERSION = 1;

/**
 * What an outage does to connections:
 * - "reset": connections are accepted and immediately reset (TCP RST); in-flight requests
 *   are reset at the outage start. The client sees an instant network error.
 * - "refuse": the listening socket is closed, so connects get ECONNREFUSED; in-flight
 *   requests are reset. The port is bound again when the outage ends.
 * - "hang": connections are accepted and requests read but never answered (a black hole);
 *   in-flight responses freeze. Hung connections are reset when the outage ends.
 */
export const OUTAGE_MODES = ['reset', 'refuse', 'hang'] as const;
export type OutageMode = (typeof OUTAGE_MODES)[number];

/** Where a stall happens: before the response's first byte, or part-way through its body. */
export const STALL_PHASES = ['first-byte', 'body'] as const;
export type StallPhase = (typeof STALL_PHASES)[number];

export interface StallSpec {
  /** Probability that one request stalls, in [0, 1]. */
  probability: number;
  /** How long a stall lasts. */
  durationMs: DurationSpec;
  /** Default "first-byte" (think of a lost SYN or request packet). */
  phase?: StallPhase;
}

/** The state of one emulated link. */
export interface LinkProfile {
  /** Round-trip delay added to every request's first byte. */
  delayMs: DurationSpec;
  /** Response throughput per request in bytes per second; null or absent = unlimited. */
  bandwidthBytesPerSec?: number | null;
  /** Occasional stalls; null or absent = none. */
  stall?: StallSpec | null;
}

export const TRANSITIONS = ['step', 'linear'] as const;
export type Transition = (typeof TRANSITIONS)[number];

/** A change of the link at a point in scenario time. */
export interface ScheduleEntry {
  atMs: number;
  /**
   * "step" (default): the change takes effect at atMs. "linear": numeric parameters ramp
   * linearly from their values at the previous entry (or t = 0) to these values at atMs.
   */
  transition?: Transition;
  link: Partial<LinkProfile>;
}

export interface OutageWindow {
  fromMs: number;
  toMs: number;
  /** Default "reset". */
  mode?: OutageMode;
}

export interface ServerScenario {
  /** Human-readable description, e.g. "Stanford (US west)". */
  label?: string;
  /** The link at t = 0. */
  link: LinkProfile;
  /** Changes over time, in non-decreasing atMs order. */
  schedule?: ScheduleEntry[];
  /** Outage windows; they must not overlap. */
  outages?: OutageWindow[];
}

/** The workload a harness drives through the scenario (paper Section 6.1 by default). */
export interface WorkloadSpec {
  /** Concurrent clients, each sending requests one after another. Default 3. */
  clients?: number;
  /** Resource sizes; client requests cycle through them. Default 512, 5120, 51200, 512000. */
  fileSizesBytes?: number[];
  /** Stop each client after this many requests. */
  requestsPerClient?: number;
  /** Stop issuing requests at this scenario time. Default: the scenario's durationMs. */
  durationMs?: number;
  /** Pause between a response and the client's next request. Default 0. */
  thinkTimeMs?: number;
  /** A request with no complete response after this long counts as failed. Default 30000. */
  requestTimeoutMs?: number;
  /**
   * After a failed request the client waits this long before its next one (a person or a
   * page noticing the error and reloading), so a refusing server cannot spin a client in
   * zero time. Default 1000.
   */
  failurePauseMs?: number;
}

export interface Scenario {
  formatVersion: 1;
  /** Short name, e.g. "peak". */
  name: string;
  description?: string;
  /** Length of the scenario timeline; after it the last link state simply persists. */
  durationMs: number;
  /** Default seed of runs that do not pass their own. */
  seed?: number | string;
  /** Replica servers by name (e.g. "A", "B", "C"), in replica order. */
  servers: Record<string, ServerScenario>;
  workload?: WorkloadSpec;
}

/** Server names become host labels (phase 2 maps "A" to a.localhost), so keep them simple. */
export const SERVER_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$/;

// ---------------------------------------------------------------------------------------
// Validation: every message names the JSON path of the offending value.

type Json = Record<string, unknown>;

function fail(path: string, message: string): never {
  throw new NetemError('WEBPP_ERR_NETEM_SCENARIO', `${path}: ${message}`);
}

function expectObject(value: unknown, path: string, allowedKeys: readonly string[]): Json {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) fail(path, 'must be an object');
  for (const key of Object.keys(value)) {
    if (!allowedKeys.includes(key)) fail(`${path}.${key}`, `unknown field (allowed: ${allowedKeys.join(', ')})`);
  }
  return value as Json;
}

interface NumberRule {
  min?: number;
  max?: number;
  /** Strictly greater than min. */
  exclusiveMin?: boolean;
  integer?: boolean;
}

function expectNumber(value: unknown, path: string, rule: NumberRule = {}): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) fail(path, 'must be a finite number');
  if (rule.integer && !Number.isInteger(value)) fail(path, 'must be an integer');
  if (rule.min !== undefined) {
    if (rule.exclusiveMin ? value <= rule.min : value < rule.min) {
      fail(path, `must be ${rule.exclusiveMin ? '>' : '≥'} ${rule.min}`);
    }
  }
  if (rule.max !== undefined && value > rule.max) fail(path, `must be ≤ ${rule.max}`);
  return value;
}

function expectEnum<T extends string>(value: unknown, path: string, allowed: readonly T[]): T {
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) {
    fail(path, `must be one of ${allowed.map((name) => JSON.stringify(name)).join(', ')}`);
  }
  return value as T;
}

function validateDistribution(value: unknown, path: string): DistributionSpec {
  const object = expectObject(value, path, ['distribution', 'meanMs', 'stdDevMs', 'shape', 'minMs', 'maxMs']);
  const spec: DistributionSpec = {
    distribution: expectEnum(object['distribution'], `${path}.distribution`, DISTRIBUTION_NAMES),
    meanMs: expectNumber(object['meanMs'], `${path}.meanMs`, { min: 0 }),
  };
  if (object['stdDevMs'] !== undefined) spec.stdDevMs = expectNumber(object['stdDevMs'], `${path}.stdDevMs`, { min: 0 });
  if (object['shape'] !== undefined) spec.shape = expectNumber(object['shape'], `${path}.shape`, { min: 1, exclusiveMin: true });
  if (object['minMs'] !== undefined) spec.minMs = expectNumber(object['minMs'], `${path}.minMs`, { min: 0 });
  if (object['maxMs'] !== undefined) spec.maxMs = expectNumber(object['maxMs'], `${path}.maxMs`, { min: 0 });
  if (spec.minMs !== undefined && spec.maxMs !== undefined && spec.minMs > spec.maxMs) fail(path, 'minMs must be ≤ maxMs');
  return spec;
}

export function validateDuration(value: unknown, path: string): DurationSpec {
  if (typeof value === 'number') return expectNumber(value, path, { min: 0 });
  return validateDistribution(value, path);
}

export function validateStall(value: unknown, path: string): StallSpec | null {
  if (value === null) return null;
  const object = expectObject(value, path, ['probability', 'durationMs', 'phase']);
  const stall: StallSpec = {
    probability: expectNumber(object['probability'], `${path}.probability`, { min: 0, max: 1 }),
    durationMs: validateDuration(object['durationMs'], `${path}.durationMs`),
  };
  if (object['phase'] !== undefined) stall.phase = expectEnum(object['phase'], `${path}.phase`, STALL_PHASES);
  return stall;
}

export function validateBandwidth(value: unknown, path: string): number | null {
  if (value === null) return null;
  return expectNumber(value, path, { min: 0, exclusiveMin: true });
}

/** Validates a full (partial = false) or partial link profile. */
export function validateLink(value: unknown, path: string, partial: true): Partial<LinkProfile>;
export function validateLink(value: unknown, path: string, partial: false): LinkProfile;
export function validateLink(value: unknown, path: string, partial: boolean): Partial<LinkProfile> {
  const object = expectObject(value, path, ['delayMs', 'bandwidthBytesPerSec', 'stall']);
  const link: Partial<LinkProfile> = {};
  if (object['delayMs'] !== undefined) link.delayMs = validateDuration(object['delayMs'], `${path}.delayMs`);
  else if (!partial) fail(`${path}.delayMs`, 'is required');
  if (object['bandwidthBytesPerSec'] !== undefined) {
    link.bandwidthBytesPerSec = validateBandwidth(object['bandwidthBytesPerSec'], `${path}.bandwidthBytesPerSec`);
  }
  if (object['stall'] !== undefined) link.stall = validateStall(object['stall'], `${path}.stall`);
  return link;
}

function validateSchedule(value: unknown, path: string): ScheduleEntry[] {
  if (!Array.isArray(value)) fail(path, 'must be an array');
  let previousAtMs = 0;
  return value.map((item, index) => {
    const itemPath = `${path}[${index}]`;
    const object = expectObject(item, itemPath, ['atMs', 'transition', 'link']);
    const atMs = expectNumber(object['atMs'], `${itemPath}.atMs`, { min: 0 });
    if (atMs < previousAtMs) fail(`${itemPath}.atMs`, `must not be earlier than the previous entry (${previousAtMs})`);
    previousAtMs = atMs;
    const entry: ScheduleEntry = { atMs, link: validateLink(object['link'], `${itemPath}.link`, true) };
    if (object['transition'] !== undefined) entry.transition = expectEnum(object['transition'], `${itemPath}.transition`, TRANSITIONS);
    return entry;
  });
}

function validateOutages(value: unknown, path: string): OutageWindow[] {
  if (!Array.isArray(value)) fail(path, 'must be an array');
  const outages = value.map((item, index) => {
    const itemPath = `${path}[${index}]`;
    const object = expectObject(item, itemPath, ['fromMs', 'toMs', 'mode']);
    const fromMs = expectNumber(object['fromMs'], `${itemPath}.fromMs`, { min: 0 });
    const toMs = expectNumber(object['toMs'], `${itemPath}.toMs`, { min: fromMs, exclusiveMin: true });
    const outage: OutageWindow = { fromMs, toMs };
    if (object['mode'] !== undefined) outage.mode = expectEnum(object['mode'], `${itemPath}.mode`, OUTAGE_MODES);
    return outage;
  });
  const sorted = [...outages].sort((a, b) => a.fromMs - b.fromMs);
  for (let i = 1; i < sorted.length; i++) {
    if (sorted[i]!.fromMs < sorted[i - 1]!.toMs) fail(path, 'outage windows must not overlap');
  }
  return outages;
}

function validateServer(value: unknown, path: string): ServerScenario {
  const object = expectObject(value, path, ['label', 'link', 'schedule', 'outages']);
  const server: ServerScenario = { link: validateLink(object['link'], `${path}.link`, false) };
  if (object['label'] !== undefined) {
    if (typeof object['label'] !== 'string') fail(`${path}.label`, 'must be a string');
    server.label = object['label'];
  }
  if (object['schedule'] !== undefined) server.schedule = validateSchedule(object['schedule'], `${path}.schedule`);
  if (object['outages'] !== undefined) server.outages = validateOutages(object['outages'], `${path}.outages`);
  return server;
}

function validateWorkload(value: unknown, path: string): WorkloadSpec {
  const object = expectObject(value, path, [
    'clients',
    'fileSizesBytes',
    'requestsPerClient',
    'durationMs',
    'thinkTimeMs',
    'requestTimeoutMs',
    'failurePauseMs',
  ]);
  const workload: WorkloadSpec = {};
  if (object['clients'] !== undefined) workload.clients = expectNumber(object['clients'], `${path}.clients`, { min: 1, max: 10_000, integer: true });
  if (object['fileSizesBytes'] !== undefined) {
    const sizes = object['fileSizesBytes'];
    if (!Array.isArray(sizes) || sizes.length === 0) fail(`${path}.fileSizesBytes`, 'must be a non-empty array');
    workload.fileSizesBytes = sizes.map((size, index) =>
      expectNumber(size, `${path}.fileSizesBytes[${index}]`, { min: 0, integer: true }),
    );
  }
  if (object['requestsPerClient'] !== undefined) {
    workload.requestsPerClient = expectNumber(object['requestsPerClient'], `${path}.requestsPerClient`, { min: 1, integer: true });
  }
  if (object['durationMs'] !== undefined) workload.durationMs = expectNumber(object['durationMs'], `${path}.durationMs`, { min: 0, exclusiveMin: true });
  if (object['thinkTimeMs'] !== undefined) workload.thinkTimeMs = expectNumber(object['thinkTimeMs'], `${path}.thinkTimeMs`, { min: 0 });
  if (object['requestTimeoutMs'] !== undefined) {
    workload.requestTimeoutMs = expectNumber(object['requestTimeoutMs'], `${path}.requestTimeoutMs`, { min: 0, exclusiveMin: true });
  }
  if (object['failurePauseMs'] !== undefined) workload.failurePauseMs = expectNumber(object['failurePauseMs'], `${path}.failurePauseMs`, { min: 0 });
  return workload;
}

/**
 * Checks a parsed scenario file and returns it typed. Throws a NetemError with code
 * WEBPP_ERR_NETEM_SCENARIO naming the JSON path of the first problem; unknown fields are
 * errors, so that a misspelt parameter cannot silently fall back to a default.
 */
export function parseScenario(value: unknown): Scenario {
  const object = expectObject(value, '$', ['$schema', 'formatVersion', 'name', 'description', 'durationMs', 'seed', 'servers', 'workload']);
  if (object['formatVersion'] !== SCENARIO_FORMAT_VERSION) fail('$.formatVersion', `must be ${SCENARIO_FORMAT_VERSION}`);
  if (typeof object['name'] !== 'string' || object['name'].length === 0) fail('$.name', 'must be a non-empty string');
  const scenario: Scenario = {
    formatVersion: 1,
    name: object['name'],
    durationMs: expectNumber(object['durationMs'], '$.durationMs', { min: 0, exclusiveMin: true }),
    servers: {},
  };
  if (object['description'] !== undefined) {
    if (typeof object['description'] !== 'string') fail('$.description', 'must be a string');
    scenario.description = object['description'];
  }
  const seed = object['seed'];
  if (seed !== undefined) {
    if (typeof seed !== 'string' && !(typeof seed === 'number' && Number.isFinite(seed))) fail('$.seed', 'must be a number or a string');
    scenario.seed = seed;
  }
  const servers = object['servers'];
  if (typeof servers !== 'object' || servers === null || Array.isArray(servers)) fail('$.servers', 'must be an object');
  const names = Object.keys(servers);
  if (names.length === 0) fail('$.servers', 'must name at least one server');
  for (const name of names) {
    if (!SERVER_NAME_PATTERN.test(name)) fail(`$.servers.${name}`, `server names must match ${SERVER_NAME_PATTERN}`);
    scenario.servers[name] = validateServer((servers as Json)[name], `$.servers.${name}`);
  }
  if (object['workload'] !== undefined) scenario.workload = validateWorkload(object['workload'], '$.workload');
  return scenario;
}

/** The names of a scenario's servers, in replica order. */
export function serverNames(scenario: Scenario): string[] {
  return Object.keys(scenario.servers);
}

/**
 * Stretches or compresses a scenario's timeline by `factor` (schedule times, outage
 * windows and durations), leaving delays and bandwidths alone. A browser run that can
 * afford only a fifth of the simulator's requests uses factor 0.2.
 */
export function scaleScenarioTime(scenario: Scenario, factor: number): Scenario {
  if (!(factor > 0) || !Number.isFinite(factor)) {
    throw new NetemError('WEBPP_ERR_NETEM_OPTIONS', `time scale must be a positive number, got ${factor}`);
  }
  const servers: Record<string, ServerScenario> = {};
  for (const [name, server] of Object.entries(scenario.servers)) {
    const scaled: ServerScenario = { ...server };
    if (server.schedule) scaled.schedule = server.schedule.map((entry) => ({ ...entry, atMs: entry.atMs * factor }));
    if (server.outages) {
      scaled.outages = server.outages.map((outage) => ({ ...outage, fromMs: outage.fromMs * factor, toMs: outage.toMs * factor }));
    }
    servers[name] = scaled;
  }
  const result: Scenario = { ...scenario, durationMs: scenario.durationMs * factor, servers };
  if (scenario.workload) {
    result.workload = { ...scenario.workload };
    if (scenario.workload.durationMs !== undefined) result.workload.durationMs = scenario.workload.durationMs * factor;
  }
  return result;
}

/** The workload with the paper's defaults filled in (Section 6.1: 3 clients, 4 sizes). */
export interface ResolvedWorkload {
  clients: number;
  fileSizesBytes: number[];
  requestsPerClient: number;
  durationMs: number;
  thinkTimeMs: number;
  requestTimeoutMs: number;
  failurePauseMs: number;
}

export const PAPER_FILE_SIZES_BYTES: readonly number[] = [512, 5 * 1024, 50 * 1024, 500 * 1024];

export function resolveWorkload(scenario: Scenario, override: WorkloadSpec = {}): ResolvedWorkload {
  const spec = { ...scenario.workload, ...override };
  const hasCount = spec.requestsPerClient !== undefined;
  return {
    clients: spec.clients ?? 3,
    fileSizesBytes: spec.fileSizesBytes ?? [...PAPER_FILE_SIZES_BYTES],
    requestsPerClient: spec.requestsPerClient ?? Number.POSITIVE_INFINITY,
    // A count-bound workload runs past the scenario end if it must; a time-bound one stops there.
    durationMs: spec.durationMs ?? (hasCount ? Number.POSITIVE_INFINITY : scenario.durationMs),
    thinkTimeMs: spec.thinkTimeMs ?? 0,
    requestTimeoutMs: spec.requestTimeoutMs ?? 30_000,
    failurePauseMs: spec.failurePauseMs ?? 1000,
  };
}
