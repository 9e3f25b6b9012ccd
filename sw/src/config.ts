/**
 * Worker configuration, resolved from the option schema (options-schema.ts): the site's
 * public options plus internal overrides for tests and benches. The page script passes the
 * tag's `data-*` attributes on the worker's URL (`/webpp-sw.js?policy=fast&timeoutCeilingMs=8000`);
 * a Workbox site passes the same options to `new ReplicaStrategy({ webpp: { ... } })`.
 *
 * Internal overrides (never documented as options): on the URL as `_<name>=<value>`
 * (`data-_flush-delay-ms="0"` on a test page), in code as the second argument of
 * resolveWorkerOptions. They reach core's internal constants (WEBPP_DEFAULTS, the
 * SelectionConfig of the paper's policies, `_preset`) and the worker's (WORKER_INTERNALS).
 */
import { FAST_PRESET, PAPER_DEFAULTS, WEBPP_DEFAULTS, resolveSelectionConfig, resolveWebppOptions } from '@webpp/core';
import type { SelectionConfig } from '@webpp/core';
import { FEATURE_NAMES } from './addons.js';
import type { FeatureName } from './addons.js';
import { WORKER_INTERNALS, WORKER_INTERNAL_BOUNDS, WORKER_OPTION_SCHEMA, numericOptionNames } from './options-schema.js';
import type { OptionSpec, PublicOptionName, PublicWorkerOptionsInput, WorkerInternals } from './options-schema.js';

type PresetName = 'paper' | 'fast';

const PRESETS: Readonly<Record<PresetName, Readonly<SelectionConfig>>> = {
  paper: PAPER_DEFAULTS,
  fast: FAST_PRESET,
};

export interface WorkerOptions extends WorkerInternals {
  /**
   * Name of the replica policy in @webpp/core's registry (packages/core/src/policies):
   * 'webpp' (the default, docs/selection.md "The webpp policy"); 'paper' and 'fast', the
   * paper's extended Refresh with the paper's values (Figure 10) or the fast ones; the
   * evaluation's 'refresh', 'hedged', 'random', 'round-robin', 'single-<n>', 'optimal',
   * 'optimal-complete'.
   */
  policy: string;
  /** The SelectionConfig the paper's policies and the baselines start from: `paper`, or `fast` under policy `fast` (or an internal `_preset`). */
  preset: PresetName;
  /** The selection parameters in force for the paper's policies and the baselines. */
  selection: SelectionConfig;
  /** Options of the webpp policy given (public ones and internal overrides); validated by the policy. */
  webpp: Record<string, number>;
  /** Opt-in features, each an add-on script beside the worker (addons.ts). */
  features: FeatureName[];
  controlCheckMs: number;
  offRetryMs: number;
  offlineMaxBytes: number;
  offlineMaxEntryBytes: number;
  offlineMaxAgeMs: number;
}

type WorkerScopeNumber = 'controlCheckMs' | 'offRetryMs' | 'offlineMaxBytes' | 'offlineMaxEntryBytes' | 'offlineMaxAgeMs';

const WORKER_NUMBERS = numericOptionNames('worker') as WorkerScopeNumber[];
const POLICY_NUMBERS = numericOptionNames('policy');

function schemaDefaults(): Pick<WorkerOptions, WorkerScopeNumber> {
  const defaults = {} as Pick<WorkerOptions, WorkerScopeNumber>;
  for (const name of WORKER_NUMBERS) defaults[name] = WORKER_OPTION_SCHEMA[name].default;
  return defaults;
}

export const DEFAULT_WORKER_OPTIONS: Readonly<Omit<WorkerOptions, 'selection' | 'preset' | 'webpp' | 'features'>> = Object.freeze({
  policy: WORKER_OPTION_SCHEMA.policy.default,
  ...WORKER_INTERNALS,
  ...schemaDefaults(),
});

export interface ParsedWorkerOptions {
  options: WorkerOptions;
  /** Human-readable problems; each bad setting is ignored, the rest still apply. */
  errors: string[];
}

export type WorkerOptionsInput = PublicWorkerOptionsInput;

/** Internal overrides by name: `preset`, SelectionConfig fields, WebppOptions fields, WORKER_INTERNALS. */
export type InternalOverrides = Partial<Record<string, unknown>>;

const SELECTION_KEYS = Object.keys(PAPER_DEFAULTS) as (keyof SelectionConfig)[];
const INTERNAL_WORKER_KEYS = Object.keys(WORKER_INTERNALS) as (keyof WorkerInternals)[];
const POLICY_NAME = /^[a-z][a-z0-9-]{0,40}$/;

function isPublic(name: string): name is PublicOptionName {
  return Object.hasOwn(WORKER_OPTION_SCHEMA, name);
}

/** Names that were options once and are internal constants now (or, for `preset`, said by `policy`). */
function isInternalName(name: string): boolean {
  return name === 'preset' || Object.hasOwn(WORKER_INTERNALS, name) || Object.hasOwn(PAPER_DEFAULTS, name) || Object.hasOwn(WEBPP_DEFAULTS, name);
}

/** Every former option that is no longer public: for the docs' migration note and the warning. */
export function removedOptionNames(): string[] {
  const names = ['preset', ...SELECTION_KEYS, ...Object.keys(WEBPP_DEFAULTS), ...INTERNAL_WORKER_KEYS];
  return [...new Set(names)].filter((name) => !isPublic(name));
}

const warned = new Set<string>();

/** One console warning per removed option and worker. */
function warnRemoved(name: string): void {
  if (warned.has(name)) return;
  warned.add(name);
  console.warn(`webpp: option "${name}" was removed and is ignored (docs/service-worker.md, "Removed options")`);
}

function checkNumber(name: string, value: unknown, spec: { kind: 'number' | 'integer'; min: number; max: number }, errors: string[]): number | undefined {
  const ok = typeof value === 'number' && Number.isFinite(value) && (spec.kind === 'number' || Number.isInteger(value)) && value >= spec.min && value <= spec.max;
  if (ok) return value;
  errors.push(`${name} must be ${spec.kind === 'integer' ? 'an integer' : 'a number'} in [${spec.min}, ${spec.max}] (got ${JSON.stringify(value)})`);
  return undefined;
}

/**
 * Resolves options from plain values (a Workbox site's `webpp`, or the parsed worker URL).
 * Never throws: a worker must start even with a bad setting, so bad values are reported in
 * `errors` (and in the state snapshot) and replaced by the defaults. A removed option is
 * ignored with one console warning naming it.
 */
export function resolveWorkerOptions(input: WorkerOptionsInput = {}, internal: InternalOverrides = {}): ParsedWorkerOptions {
  const errors: string[] = [];
  const given = input as Record<string, unknown>;
  for (const [name, value] of Object.entries(given)) {
    if (value === undefined || isPublic(name)) continue;
    if (isInternalName(name)) {
      warnRemoved(name);
      errors.push(`option "${name}" was removed and is ignored`);
    } else errors.push(`unknown option "${name}"`);
  }

  // Internal overrides: the preset, the selection, the webpp policy's tunables, the worker's constants.
  const internals: WorkerInternals = { ...WORKER_INTERNALS };
  const selectionOverrides: Partial<SelectionConfig> = {};
  const webpp: Record<string, number> = {};
  let preset: PresetName = 'paper';
  for (const [name, value] of Object.entries(internal)) {
    if (value === undefined) continue;
    if (name === 'preset') {
      if (value === 'paper' || value === 'fast') preset = value;
      else errors.push(`_preset must be "paper" or "fast" (got ${JSON.stringify(value)})`);
      continue;
    }
    const known = Object.hasOwn(WORKER_INTERNALS, name) || Object.hasOwn(PAPER_DEFAULTS, name) || Object.hasOwn(WEBPP_DEFAULTS, name);
    if (!known) {
      errors.push(`unknown internal override "_${name}"`);
      continue;
    }
    if (typeof value !== 'number' || !Number.isFinite(value)) {
      errors.push(`_${name} must be a finite number (got ${JSON.stringify(value)})`);
      continue;
    }
    if (Object.hasOwn(WORKER_INTERNALS, name)) {
      const [min, max] = WORKER_INTERNAL_BOUNDS[name as keyof WorkerInternals];
      const checked = checkNumber(`_${name}`, value, { kind: 'integer', min, max }, errors);
      if (checked !== undefined) internals[name as keyof WorkerInternals] = checked;
      continue;
    }
    if (Object.hasOwn(PAPER_DEFAULTS, name)) selectionOverrides[name as keyof SelectionConfig] = value;
    if (Object.hasOwn(WEBPP_DEFAULTS, name)) webpp[name] = value;
  }
  // The policies named after a preset run with that preset's values.
  const policy = resolvePolicyName(given['policy'], errors);
  if (policy === 'paper' || policy === 'fast') {
    if (internal['preset'] !== undefined && internal['preset'] !== policy) errors.push(`policy "${policy}" runs with its own values (got _preset ${JSON.stringify(internal['preset'])})`);
    preset = policy;
  }

  // The public options of the policy: the webpp policy's, and the timeouts also the paper's.
  for (const name of POLICY_NUMBERS) {
    const spec = WORKER_OPTION_SCHEMA[name] as OptionSpec;
    if (given[name] === undefined || (spec.kind !== 'number' && spec.kind !== 'integer')) continue;
    const value = checkNumber(name, given[name], spec, errors);
    if (value === undefined) continue;
    webpp[name] = value;
    if (Object.hasOwn(PAPER_DEFAULTS, name)) selectionOverrides[name as keyof SelectionConfig] = value;
  }
  let selection: SelectionConfig;
  try {
    selection = resolveSelectionConfig(selectionOverrides, PRESETS[preset]);
  } catch (error) {
    errors.push(error instanceof Error ? error.message : String(error));
    selection = resolveSelectionConfig({}, PRESETS[preset]);
  }

  const options: WorkerOptions = { ...DEFAULT_WORKER_OPTIONS, ...internals, policy, preset, selection, webpp, features: resolveFeatures(given['features'], errors) };
  for (const name of WORKER_NUMBERS) {
    if (given[name] === undefined) continue;
    const value = checkNumber(name, given[name], WORKER_OPTION_SCHEMA[name], errors);
    if (value !== undefined) options[name] = value;
  }
  return { options, errors };
}

function resolvePolicyName(value: unknown, errors: string[]): string {
  if (value === undefined) return WORKER_OPTION_SCHEMA.policy.default;
  if (typeof value === 'string' && POLICY_NAME.test(value)) return value;
  errors.push(`policy must be a policy name such as "webpp" or "paper" (got ${JSON.stringify(value)})`);
  return WORKER_OPTION_SCHEMA.policy.default;
}

/** The features named, as a list or comma-separated; unknown names are reported and left out. */
function resolveFeatures(input: unknown, errors: string[]): FeatureName[] {
  if (input === undefined) return [];
  const names = typeof input === 'string' ? input.split(',') : Array.isArray(input) ? (input as unknown[]) : [JSON.stringify(input)];
  const features: FeatureName[] = [];
  for (const raw of names) {
    const name = typeof raw === 'string' ? raw.trim() : JSON.stringify(raw);
    if (name === '') continue;
    if ((FEATURE_NAMES as readonly string[]).includes(name)) {
      if (!features.includes(name as FeatureName)) features.push(name as FeatureName);
    } else errors.push(`features: unknown feature ${JSON.stringify(name)} (known: ${FEATURE_NAMES.join(', ')})`);
  }
  return features;
}

/** A query value as a number, or the text when it is not one (resolveWorkerOptions reports it). */
function queryValue(raw: string): number | string {
  const value = raw.trim() === '' ? Number.NaN : Number(raw);
  return Number.isFinite(value) ? value : raw;
}

/**
 * Parses options from the worker's URL query (`self.location.search`): the public options
 * by the schema's kinds, `_<name>` as internal overrides, `v` (a cache buster) ignored.
 * Unknown parameters are reported, not fatal.
 */
export function parseWorkerOptions(params: URLSearchParams): ParsedWorkerOptions {
  const input: Record<string, unknown> = {};
  const internal: InternalOverrides = {};
  for (const [key, raw] of params) {
    if (key === 'v') continue;
    if (key.startsWith('_')) {
      const name = key.slice(1);
      internal[name] = name === 'preset' ? raw : queryValue(raw);
      continue;
    }
    const spec = isPublic(key) ? (WORKER_OPTION_SCHEMA[key] as OptionSpec) : undefined;
    input[key] = spec === undefined || spec.kind === 'policy' || spec.kind === 'features' ? raw : queryValue(raw);
  }
  return resolveWorkerOptions(input, internal);
}

/** The timeouts the worker applies itself: background requests, the own-origin check, the page script's network wait. */
export interface WorkerTimeouts {
  /** The longest any one request may wait for its answer. */
  timeoutCeilingMs: number;
  /** The wait before anything is measured. */
  initialTimeoutMs: number;
}

/**
 * The timeouts of the policy in force: the webpp policy's own (core's webpp/options.ts, 5 s
 * and 2 s by default, with the site's overrides) under `webpp`; the selection parameters
 * (the preset's) under every other policy.
 */
export function workerTimeouts(options: WorkerOptions): WorkerTimeouts {
  if (options.policy === 'webpp') {
    try {
      const webpp = resolveWebppOptions(options.webpp);
      return { timeoutCeilingMs: webpp.timeoutCeilingMs, initialTimeoutMs: webpp.initialTimeoutMs };
    } catch {
      // Bad webpp options: namedPolicy reports them and runs "refresh" over the selection parameters.
    }
  }
  return { timeoutCeilingMs: options.selection.timeoutCeilingMs, initialTimeoutMs: options.selection.initialTimeoutMs };
}
