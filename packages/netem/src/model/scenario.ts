/**
 * The scenario file format (docs/evaluation.md): per replica server, a link profile
 * (delay distribution, bandwidth, stalls), a piecewise schedule of changes over time and
 * outage windows; plus an optional workload for the harness. Plain JSON, defined once in
 * scenario-schema.ts and checked here with Ajv plus the rules a schema cannot say (order of
 * the schedule, overlapping outages, clamps).
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { NetemError } from './errors.js';
import {
  LinkSchema,
  PartialLinkSchema,
  ScenarioSchema,
  SERVER_NAME_PATTERN,
  WorkloadSchema,
  type DistributionSpec,
  type LinkProfile,
  type OutageWindow,
  type Scenario,
  type ServerScenario,
  type WorkloadSpec,
} from './scenario-schema.js';

export {
  ScenarioSchema,
  SCENARIO_FORMAT_VERSION,
  OUTAGE_MODES,
  STALL_PHASES,
  TRANSITIONS,
  SERVER_NAME_PATTERN,
  type OutageMode,
  type BrownoutWindow,
  type LinkSharing,
  LINK_SHARINGS,
  type StallPhase,
  type StallSpec,
  type LinkProfile,
  type Transition,
  type ScheduleEntry,
  type OutageWindow,
  type ServerScenario,
  type WorkloadSpec,
  type Scenario,
} from './scenario-schema.js';

const ajv = new Ajv({ allErrors: true, verbose: true, strictTypes: false });
const validators = {
  scenario: ajv.compile(ScenarioSchema),
  link: ajv.compile(LinkSchema),
  partialLink: ajv.compile(PartialLinkSchema),
};

function fail(path: string, message: string): never {
  throw new NetemError('WEBPP_ERR_NETEM_SCENARIO', `${path}: ${message}`);
}

/** "/servers/A/schedule/1/atMs" under "$" → "$.servers.A.schedule[1].atMs". */
function jsonPath(root: string, pointer: string): string {
  return pointer === ''
    ? root
    : root + pointer.slice(1).split('/').map((part) => (/^\d+$/.test(part) ? `[${part}]` : `.${part.replace(/~1/g, '/').replace(/~0/g, '~')}`)).join('');
}

function sentence(error: ErrorObject): string {
  const params = error.params as { additionalProperty?: string; missingProperty?: string; allowedValues?: unknown[] };
  if (error.keyword === 'enum') return `must be one of ${(params.allowedValues ?? []).map((value) => JSON.stringify(value)).join(', ')}`;
  if (error.keyword === 'type') return `must be ${error.schema === 'number' ? 'a finite number' : String(error.schema)}`;
  return error.message ?? 'is invalid';
}

/**
 * Ajv's errors as "path: problem" lines. For a field that may be one of several types (a
 * duration: a number or a distribution), the branch the value was meant for speaks: its
 * problems are reported, not that the value is not of the other types.
 */
function describe(errors: ErrorObject[], root: string): string {
  const unions = new Set(errors.filter((error) => error.keyword === 'anyOf').map((error) => error.instancePath));
  const lines = errors.flatMap((error) => {
    const path = jsonPath(root, error.instancePath);
    if (error.keyword === 'anyOf') {
      const inside = errors.filter((other) => other.keyword !== 'anyOf' && (other.instancePath === error.instancePath || other.instancePath.startsWith(`${error.instancePath}/`)));
      if (inside.some((other) => other.keyword !== 'type' || other.instancePath !== error.instancePath)) return [];
      return [`${path}: must be ${inside.map((other) => String(other.schema)).join(' or ')}`];
    }
    if (unions.has(error.instancePath) && error.keyword === 'type') return [];
    if (error.keyword === 'additionalProperties') {
      const name = String((error.params as { additionalProperty?: string }).additionalProperty);
      const allowed = Object.keys((error.parentSchema as { properties?: object }).properties ?? {});
      return [`${path}.${name}: unknown field (allowed: ${allowed.join(', ')})`];
    }
    if (error.keyword === 'required') return [`${path}.${String((error.params as { missingProperty?: string }).missingProperty)}: is required`];
    return [`${path}: ${sentence(error)}`];
  });
  return [...new Set(lines)].join('; ');
}

function check<T>(validate: ValidateFunction, value: unknown, root: string): T {
  if (!validate(value)) throw new NetemError('WEBPP_ERR_NETEM_SCENARIO', describe(validate.errors ?? [], root));
  return value as T;
}

/** Clamps of every distribution in a link: minMs ≤ maxMs. */
function checkClamps(link: Partial<LinkProfile>, path: string): void {
  const durations: Array<[unknown, string]> = [[link.delayMs, `${path}.delayMs`], [link.stall?.durationMs, `${path}.stall.durationMs`]];
  for (const [spec, specPath] of durations) {
    const distribution = spec as DistributionSpec | number | undefined;
    if (typeof distribution === 'object' && distribution.minMs !== undefined && distribution.maxMs !== undefined && distribution.minMs > distribution.maxMs) {
      fail(specPath, 'minMs must be ≤ maxMs');
    }
  }
}

/** Validates a full (partial = false) or partial link profile (a runtime update). */
export function validateLink(value: unknown, path: string, partial: true): Partial<LinkProfile>;
export function validateLink(value: unknown, path: string, partial: false): LinkProfile;
export function validateLink(value: unknown, path: string, partial: boolean): Partial<LinkProfile> {
  const link = check<Partial<LinkProfile>>(partial ? validators.partialLink : validators.link, value, path);
  checkClamps(link, path);
  return link;
}

function checkServer(server: ServerScenario, path: string): void {
  checkClamps(server.link, `${path}.link`);
  let previousAtMs = 0;
  (server.schedule ?? []).forEach((entry, index) => {
    if (entry.atMs < previousAtMs) fail(`${path}.schedule[${index}].atMs`, `must not be earlier than the previous entry (${previousAtMs})`);
    previousAtMs = entry.atMs;
    checkClamps(entry.link, `${path}.schedule[${index}].link`);
  });
  const outages: OutageWindow[] = server.outages ?? [];
  outages.forEach((outage, index) => {
    if (outage.toMs <= outage.fromMs) fail(`${path}.outages[${index}].toMs`, `must be > fromMs (${outage.fromMs})`);
  });
  (server.brownouts ?? []).forEach((brownout, index) => {
    if (brownout.toMs <= brownout.fromMs) fail(`${path}.brownouts[${index}].toMs`, `must be > fromMs (${brownout.fromMs})`);
  });
  const sorted = [...outages].sort((a, b) => a.fromMs - b.fromMs);
  for (let i = 1; i < sorted.length; i++) {
    if (sorted[i]!.fromMs < sorted[i - 1]!.toMs) fail(`${path}.outages`, 'outage windows must not overlap');
  }
}

/**
 * Checks a parsed scenario file and returns it typed. Throws a NetemError with code
 * WEBPP_ERR_NETEM_SCENARIO naming the JSON path of every problem; unknown fields are
 * errors, so that a misspelt parameter cannot silently fall back to a default.
 */
export function parseScenario(value: unknown): Scenario {
  const scenario = check<Scenario>(validators.scenario, value, '$');
  for (const [name, server] of Object.entries(scenario.servers)) {
    if (!SERVER_NAME_PATTERN.test(name)) fail(`$.servers.${name}`, `server names must match ${SERVER_NAME_PATTERN}`);
    checkServer(server, `$.servers.${name}`);
  }
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
    if (server.brownouts) {
      scaled.brownouts = server.brownouts.map((brownout) => ({ ...brownout, fromMs: brownout.fromMs * factor, toMs: brownout.toMs * factor }));
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

/** The defaults of the workload fields, as the schema states them. */
const defaultOf = <T>(name: keyof typeof WorkloadSchema.properties): T => (WorkloadSchema.properties[name] as { default?: unknown }).default as T;
const WORKLOAD_DEFAULTS = {
  clients: defaultOf<number>('clients'),
  fileSizesBytes: defaultOf<number[]>('fileSizesBytes'),
  thinkTimeMs: defaultOf<number>('thinkTimeMs'),
  requestTimeoutMs: defaultOf<number>('requestTimeoutMs'),
  failurePauseMs: defaultOf<number>('failurePauseMs'),
};

export const PAPER_FILE_SIZES_BYTES: readonly number[] = WORKLOAD_DEFAULTS.fileSizesBytes;

export function resolveWorkload(scenario: Scenario, override: WorkloadSpec = {}): ResolvedWorkload {
  const spec = { ...scenario.workload, ...override };
  const hasCount = spec.requestsPerClient !== undefined;
  const defaults = WORKLOAD_DEFAULTS;
  return {
    clients: spec.clients ?? defaults.clients,
    fileSizesBytes: spec.fileSizesBytes ?? [...defaults.fileSizesBytes],
    requestsPerClient: spec.requestsPerClient ?? Number.POSITIVE_INFINITY,
    // A count-bound workload runs past the scenario end if it must; a time-bound one stops there.
    durationMs: spec.durationMs ?? (hasCount ? Number.POSITIVE_INFINITY : scenario.durationMs),
    thinkTimeMs: spec.thinkTimeMs ?? defaults.thinkTimeMs,
    requestTimeoutMs: spec.requestTimeoutMs ?? defaults.requestTimeoutMs,
    failurePauseMs: spec.failurePauseMs ?? defaults.failurePauseMs,
  };
}
