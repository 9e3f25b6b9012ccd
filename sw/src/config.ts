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
import { FAST_PRESET, PAPER_DEFAULTS, WEBPP_DEFAULTS, resolveWebppOptions } from '@webpp/core';
import type { SelectionConfig } from '@webpp/core';
import { FEATURE_NAMES, WORKER_INTERNALS, WORKER_OPTION_SCHEMA } from './options-schema.js';
import type { FeatureName, OptionSpec, PublicWorkerOptionsInput, WorkerInternals } from './options-schema.js';

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
  /**
   * The selection parameters of the paper's policies and the baselines: the preset's, with
   * the site's timeouts and the internal overrides. Validated by those policies (core's
   * selectionFrom, in the policies add-on), which report a bad value as the policy's error.
   */
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

const POLICY_NAME = /^[a-z][a-z0-9-]{0,40}$/;

const has = (table: object, name: string): boolean => Object.hasOwn(table, name);

/** The defaults of the worker's own options: the schema's, and its internal constants. */
function workerDefaults(): Record<string, unknown> {
  const defaults: Record<string, unknown> = { ...WORKER_INTERNALS };
  for (const [name, spec] of Object.entries(WORKER_OPTION_SCHEMA)) if (!has(WEBPP_DEFAULTS, name)) defaults[name] = spec.default;
  delete defaults['features'];
  return defaults;
}

export const DEFAULT_WORKER_OPTIONS = Object.freeze(workerDefaults()) as Readonly<Omit<WorkerOptions, 'selection' | 'preset' | 'webpp' | 'features'>>;

export interface ParsedWorkerOptions {
  options: WorkerOptions;
  /** Human-readable problems; each bad setting is ignored, the rest still apply. */
  errors: string[];
}

export type WorkerOptionsInput = PublicWorkerOptionsInput;

/** Internal overrides by name: `preset`, SelectionConfig fields, WebppOptions fields, WORKER_INTERNALS. */
export type InternalOverrides = Partial<Record<string, unknown>>;

/** Names that were options once and are internal constants now (or, for `preset`, said by `policy`). */
function isInternalName(name: string): boolean {
  return name === 'preset' || has(WORKER_INTERNALS, name) || has(PAPER_DEFAULTS, name) || has(WEBPP_DEFAULTS, name);
}

const warned = new Set<string>();

/** Reports a removed option: in the errors, and with one console warning per option and worker. */
function removed(name: string, errors: string[]): void {
  const text = `option "${name}" was removed and is ignored`;
  errors.push(text);
  if (!warned.has(name)) console.warn(`webpp: ${text} (docs/service-worker.md)`);
  warned.add(name);
}

/**
 * Resolves options from plain values (a Workbox site's `webpp`, or the parsed worker URL).
 * Never throws: a worker must start even with a bad setting, so bad values are reported in
 * `errors` (and in the state snapshot) and replaced by the defaults. A removed option is
 * ignored with one console warning naming it. Internal overrides must be finite numbers
 * (`preset`: "paper" or "fast"); the policy validates its own.
 */
export function resolveWorkerOptions(input: WorkerOptionsInput = {}, internal: InternalOverrides = {}): ParsedWorkerOptions {
  const errors: string[] = [];
  const options = { ...DEFAULT_WORKER_OPTIONS, preset: 'paper', webpp: {}, features: [] } as unknown as WorkerOptions;
  const fields = options as unknown as Record<string, unknown>;
  const selection: Record<string, number> = {};
  for (const [name, value] of Object.entries(input as Record<string, unknown>)) {
    if (value === undefined) continue;
    const spec = (WORKER_OPTION_SCHEMA as Record<string, OptionSpec>)[name];
    if (spec === undefined) {
      if (isInternalName(name)) removed(name, errors);
      else errors.push(`unknown option "${name}"`);
    } else if (spec.kind === 'policy') {
      if (typeof value === 'string' && POLICY_NAME.test(value)) options.policy = value;
      else errors.push(`policy must be a policy name (got ${JSON.stringify(value)})`);
    } else if (spec.kind === 'features') options.features = resolveFeatures(value, errors);
    else if (typeof value !== 'number' || !(value >= spec.min && value <= spec.max) || (spec.kind === 'integer' && !Number.isInteger(value))) {
      errors.push(`${name} must be ${spec.kind === 'integer' ? 'an integer ' : ''}in [${spec.min}, ${spec.max}] (got ${JSON.stringify(value)})`);
    } else if (has(WEBPP_DEFAULTS, name)) {
      // An option of the webpp policy; the timeouts also of the paper's policies.
      options.webpp[name] = value;
      if (has(PAPER_DEFAULTS, name)) selection[name] = value;
    } else fields[name] = value;
  }
  for (const [name, value] of Object.entries(internal)) {
    if (value === undefined) continue;
    if (name === 'preset' ? value !== 'paper' && value !== 'fast' : typeof value !== 'number' || !Number.isFinite(value) || !isInternalName(name)) {
      errors.push(`bad internal override _${name} (got ${JSON.stringify(value)})`);
    } else if (name === 'preset') options.preset = value as PresetName;
    else {
      // A site's public option wins over an internal override of the same constant.
      const number = value as number;
      if (has(WORKER_INTERNALS, name)) fields[name] = number;
      if (has(PAPER_DEFAULTS, name)) selection[name] ??= number;
      if (has(WEBPP_DEFAULTS, name)) options.webpp[name] ??= number;
    }
  }
  // The policies named after a preset run with that preset's values.
  if (options.policy === 'paper' || options.policy === 'fast') options.preset = options.policy;
  // Checked where it is used, by the paper's policies (selectionFrom): the default worker, whose
  // `webpp` policy does not use it, carries neither the check nor its messages (issue 26 §4).
  options.selection = { ...PRESETS[options.preset], ...selection };
  return { options, errors };
}

/** The features named, as a list or comma-separated; unknown names are reported and left out. */
function resolveFeatures(input: unknown, errors: string[]): FeatureName[] {
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
    const kind = (WORKER_OPTION_SCHEMA as Record<string, OptionSpec>)[key]?.kind;
    if (key.startsWith('_')) internal[key.slice(1)] = key === '_preset' ? raw : queryValue(raw);
    else input[key] = kind === 'policy' || kind === 'features' ? raw : queryValue(raw);
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
