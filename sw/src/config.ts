/**
 * Worker configuration: the selection parameters of the extended Refresh algorithm (paper
 * Section 4.1, Figure 10) plus the worker's own knobs. The page script passes them on the
 * worker's URL (`/webpp-sw.js?preset=fast&ttlMs=5000`), so a site configures the worker
 * from its script tag; a Workbox site passes them to `new ReplicaStrategy({ ... })`.
 */
import { FAST_PRESET, PAPER_DEFAULTS, WEBPP_DEFAULTS, resolveSelectionConfig, resolveWebppOptions } from '@webpp/core';
import type { SelectionConfig } from '@webpp/core';
import { FEATURE_NAMES } from './addons.js';
import type { FeatureName } from './addons.js';

export type PresetName = 'paper' | 'fast';

export const PRESETS: Readonly<Record<PresetName, Readonly<SelectionConfig>>> = {
  paper: PAPER_DEFAULTS,
  fast: FAST_PRESET,
};

export interface WorkerOptions {
  preset: PresetName;
  /** The selection parameters in force: the preset with any overrides applied. */
  selection: SelectionConfig;
  /**
   * Name of the replica policy in @webpp/core's registry (packages/core/src/policies):
   * 'webpp' (the default) is the v2 policy (docs/selection.md, "The webpp policy"; `preset`
   * and the selection parameters do not apply to it);
   * 'refresh' is the paper's extended Refresh over `preset`; 'paper' and 'fast' are the same
   * algorithm with that preset's values (they set the preset); the evaluation baselines
   * are 'random', 'round-robin', 'single-<n>', 'optimal', 'optimal-complete', 'hedged'.
   */
  policy: string;
  /**
   * Parameters of the webpp policy given by name (`hedgeQuantile=0.9`, `timeoutFloorMs=…`;
   * core's webpp/options.ts); the timeout bounds it shares with the selection parameters
   * apply to both. Validated by the policy.
   */
  webpp: Record<string, number>;
  /**
   * Opt-in features, each an add-on script beside the worker that it imports at start-up
   * (addons.ts): `batch` (batch transmission and the logical-URL cache, docs/batching.md),
   * `offline` (offline copies, offline-cache.ts). On the script tag: `data-features="batch,offline"`.
   */
  features: FeatureName[];
  /** Latency-table updates are written to IndexedDB at most this often (batched, never on the hot path). */
  flushDelayMs: number;
  /** How many recent decisions and events the state snapshot keeps. */
  historySize: number;
  /**
   * After `webpp-control: off`, a worker that gets installed again within this time stays
   * off and unregisters at once (the page script also skips registering for this long).
   */
  offRetryMs: number;
  /**
   * Response bodies of at least this many bytes (by Content-Length), or of unknown length,
   * resume from another replica when they break off mid-stream (resumable-body.ts).
   * Smaller bodies are passed on as they are: they arrive in a segment or two, and passing
   * every body through the worker's JavaScript costs a few tenths of a millisecond each.
   */
  resumeMinBytes: number;
  /**
   * On a navigation served by a replica, the worker asks the site's own origin with one
   * background HEAD when it has not heard from it for this long (control-check.ts): the
   * own origin's `webpp-control` and digests still reach it. 0: on every such navigation.
   */
  controlCheckMs: number;
  /**
   * Offline copies (offline-cache.ts): when every replica fails, pages and resources already
   * loaded are served from copies kept under their logical URL. Total body bytes kept (0
   * turns them off), entries kept (least recently used go first), the largest response
   * saved, and the oldest copy served.
   */
  offlineMaxBytes: number;
  offlineMaxEntries: number;
  offlineMaxEntryBytes: number;
  offlineMaxAgeMs: number;
}

export const DEFAULT_WORKER_OPTIONS: Readonly<Omit<WorkerOptions, 'selection' | 'preset' | 'webpp' | 'features'>> = Object.freeze({
  policy: 'webpp',
  flushDelayMs: 1_000,
  historySize: 200,
  offRetryMs: 60 * 60 * 1_000,
  resumeMinBytes: 64 * 1_024,
  controlCheckMs: 60_000,
  offlineMaxBytes: 50 * 1_024 * 1_024,
  offlineMaxEntries: 1_000,
  offlineMaxEntryBytes: 10 * 1_024 * 1_024,
  offlineMaxAgeMs: 30 * 24 * 60 * 60 * 1_000,
});

const SELECTION_KEYS = Object.keys(PAPER_DEFAULTS) as (keyof SelectionConfig)[];

/** Bounds of the worker's own numeric options. */
const WORKER_NUMBER_BOUNDS = {
  flushDelayMs: [0, 60_000],
  historySize: [1, 5_000],
  offRetryMs: [0, 30 * 24 * 60 * 60 * 1_000],
  resumeMinBytes: [0, Number.MAX_SAFE_INTEGER],
  controlCheckMs: [0, 24 * 60 * 60 * 1_000],
  offlineMaxBytes: [0, Number.MAX_SAFE_INTEGER],
  offlineMaxEntries: [0, 1_000_000],
  offlineMaxEntryBytes: [0, Number.MAX_SAFE_INTEGER],
  offlineMaxAgeMs: [0, Number.MAX_SAFE_INTEGER],
} as const;

export interface ParsedWorkerOptions {
  options: WorkerOptions;
  /** Human-readable problems; each bad setting is ignored, the rest still apply. */
  errors: string[];
}

export type WorkerOptionsInput = Partial<Omit<WorkerOptions, 'selection' | 'webpp' | 'features'>> & { features?: string | readonly string[] } & Partial<SelectionConfig> & Partial<Record<keyof typeof WEBPP_DEFAULTS, number>>;

const WEBPP_KEYS = Object.keys(WEBPP_DEFAULTS) as (keyof typeof WEBPP_DEFAULTS)[];

/**
 * Resolves options from plain values (a Workbox site's constructor argument). Never
 * throws: a worker must start even with a bad setting, so bad values are reported in
 * `errors` (and in the state snapshot) and replaced by the defaults.
 */
export function resolveWorkerOptions(input: WorkerOptionsInput = {}): ParsedWorkerOptions {
  const errors: string[] = [];
  let preset: PresetName = 'paper';
  if (input.preset !== undefined) {
    if (input.preset === 'paper' || input.preset === 'fast') preset = input.preset;
    else errors.push(`preset must be "paper" or "fast" (got ${JSON.stringify(input.preset)})`);
  }
  // The policies named after a preset run with that preset's values.
  if (input.policy === 'paper' || input.policy === 'fast') {
    if (input.preset !== undefined && input.preset !== input.policy) errors.push(`policy "${input.policy}" runs with preset "${input.policy}" (got preset ${JSON.stringify(input.preset)})`);
    preset = input.policy;
  }
  const base = PRESETS[preset];

  const overrides: Partial<SelectionConfig> = {};
  for (const key of SELECTION_KEYS) {
    const value = input[key];
    if (value === undefined) continue;
    if (typeof value === 'number' && Number.isFinite(value)) overrides[key] = value;
    else errors.push(`${key} must be a finite number (got ${JSON.stringify(value)})`);
  }
  let selection: SelectionConfig;
  try {
    selection = resolveSelectionConfig(overrides, base);
  } catch (error) {
    errors.push(error instanceof Error ? error.message : String(error));
    selection = resolveSelectionConfig({}, base);
  }

  const webpp: Record<string, number> = {};
  for (const key of WEBPP_KEYS) {
    const value = input[key];
    if (value === undefined) continue;
    if (typeof value === 'number' && Number.isFinite(value)) webpp[key] = value;
    else if (!SELECTION_KEYS.includes(key as keyof SelectionConfig)) errors.push(`${key} must be a finite number (got ${JSON.stringify(value)})`);
  }
  const options: WorkerOptions = { ...DEFAULT_WORKER_OPTIONS, preset, selection, webpp, features: resolveFeatures(input.features, errors) };
  if (input.policy !== undefined) {
    if (typeof input.policy === 'string' && /^[a-z][a-z0-9-]{0,40}$/.test(input.policy)) options.policy = input.policy;
    else errors.push(`policy must be a policy name such as "refresh" (got ${JSON.stringify(input.policy)})`);
  }
  for (const key of Object.keys(WORKER_NUMBER_BOUNDS) as (keyof typeof WORKER_NUMBER_BOUNDS)[]) {
    const value = input[key];
    if (value === undefined) continue;
    const [min, max] = WORKER_NUMBER_BOUNDS[key];
    if (typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max) options[key] = value;
    else errors.push(`${key} must be an integer in [${min}, ${max}] (got ${JSON.stringify(value)})`);
  }
  return { options, errors };
}

/** The features named, as a list or comma-separated; unknown names are reported and left out. */
function resolveFeatures(input: string | readonly string[] | undefined, errors: string[]): FeatureName[] {
  if (input === undefined) return [];
  const names = typeof input === 'string' ? input.split(',') : Array.isArray(input) ? input : [String(input)];
  const features: FeatureName[] = [];
  for (const raw of names) {
    const name = String(raw).trim();
    if (name === '') continue;
    if ((FEATURE_NAMES as readonly string[]).includes(name)) {
      if (!features.includes(name as FeatureName)) features.push(name as FeatureName);
    } else errors.push(`features: unknown feature ${JSON.stringify(name)} (known: ${FEATURE_NAMES.join(', ')})`);
  }
  return features;
}

/**
 * Parses options from the worker's URL query (`self.location.search`). Numbers are decimal;
 * unknown parameters are reported, not fatal.
 */
export function parseWorkerOptions(params: URLSearchParams): ParsedWorkerOptions {
  const input: Record<string, unknown> = {};
  const errors: string[] = [];
  const numeric = new Set<string>([...SELECTION_KEYS, ...WEBPP_KEYS, ...Object.keys(WORKER_NUMBER_BOUNDS)]);
  for (const [key, raw] of params) {
    if (key === 'preset' || key === 'policy' || key === 'features') input[key] = raw;
    else if (numeric.has(key)) {
      const value = raw.trim() === '' ? Number.NaN : Number(raw);
      if (Number.isFinite(value)) input[key] = value;
      else errors.push(`${key} must be a number (got ${JSON.stringify(raw)})`);
    }
    else if (key !== 'v') errors.push(`unknown option "${key}"`);
  }
  const parsed = resolveWorkerOptions(input);
  return { options: parsed.options, errors: [...errors, ...parsed.errors] };
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
