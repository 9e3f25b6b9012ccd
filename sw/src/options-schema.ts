/**
 * The one table of the worker's public options (issue 26 §3): name, kind, default and
 * bounds. From it come the option types, the defaults, the validation of config.ts (the
 * worker URL's query, which the page script fills from the tag's `data-*` attributes, and a
 * Workbox site's `new ReplicaStrategy({ webpp })`), and the docs table (scripts/docs-options.ts,
 * with the text of options-docs.ts, which the worker bundle does not carry).
 *
 * Public options are the ones a site owner has a reason to set. Everything else is an
 * internal constant: core's `WEBPP_DEFAULTS` and `PAPER_DEFAULTS`/`FAST_PRESET` (each
 * citing its source) and `WORKER_INTERNALS` below; tests and benches reach them through the
 * internal overrides (config.ts, `_name` on the worker URL), never a documented option.
 *
 * A plain table rather than a schema library: the worker carries it, and a table of
 * fifteen rows is a few hundred bytes where TypeBox's checker is tens of kilobytes.
 */
import { WEBPP_DEFAULTS } from '@webpp/core';
import type { FeatureName } from './addons.js';

const DAY_MS = 24 * 60 * 60 * 1_000;

/** `worker`: applies to the worker; `policy`: an option of the webpp policy (the timeouts also of the paper's policies). */
type OptionScope = 'worker' | 'policy';

interface NumberOption {
  kind: 'integer' | 'number';
  scope: OptionScope;
  /** The webpp policy's default for `policy` options (the paper's policies have their own, PAPER_DEFAULTS). */
  default: number;
  min: number;
  max: number;
}

interface PolicyNameOption {
  kind: 'policy';
  scope: 'worker';
  default: string;
}

interface FeaturesOption {
  kind: 'features';
  scope: 'worker';
  default: readonly FeatureName[];
}

export type OptionSpec = NumberOption | PolicyNameOption | FeaturesOption;

export const WORKER_OPTION_SCHEMA = {
  policy: { kind: 'policy', scope: 'worker', default: 'webpp' },
  features: { kind: 'features', scope: 'worker', default: [] },
  timeoutFloorMs: { kind: 'number', scope: 'policy', default: WEBPP_DEFAULTS.timeoutFloorMs, min: 1, max: 600_000 },
  timeoutCeilingMs: { kind: 'number', scope: 'policy', default: WEBPP_DEFAULTS.timeoutCeilingMs, min: 1, max: 600_000 },
  initialTimeoutMs: { kind: 'number', scope: 'policy', default: WEBPP_DEFAULTS.initialTimeoutMs, min: 1, max: 600_000 },
  extraBudgetShare: { kind: 'number', scope: 'policy', default: WEBPP_DEFAULTS.extraBudgetShare, min: 0, max: 1 },
  hedgeBudgetShare: { kind: 'number', scope: 'policy', default: WEBPP_DEFAULTS.hedgeBudgetShare, min: 0, max: 1 },
  ejectAfterFailures: { kind: 'integer', scope: 'policy', default: WEBPP_DEFAULTS.ejectAfterFailures, min: 1, max: 100 },
  probeBackoffCapMs: { kind: 'number', scope: 'policy', default: WEBPP_DEFAULTS.probeBackoffCapMs, min: 1, max: DAY_MS },
  controlCheckMs: { kind: 'integer', scope: 'worker', default: 60_000, min: 0, max: DAY_MS },
  offRetryMs: { kind: 'integer', scope: 'worker', default: 60 * 60 * 1_000, min: 0, max: 30 * DAY_MS },
  offlineMaxBytes: { kind: 'integer', scope: 'worker', default: 50 * 1_024 * 1_024, min: 0, max: Number.MAX_SAFE_INTEGER },
  offlineMaxEntryBytes: { kind: 'integer', scope: 'worker', default: 10 * 1_024 * 1_024, min: 0, max: Number.MAX_SAFE_INTEGER },
  offlineMaxAgeMs: { kind: 'integer', scope: 'worker', default: 30 * DAY_MS, min: 0, max: Number.MAX_SAFE_INTEGER },
} as const satisfies Record<string, OptionSpec>;

export type PublicOptionName = keyof typeof WORKER_OPTION_SCHEMA;

type ValueOf<S> = S extends { kind: 'policy' } ? string : S extends { kind: 'features' } ? FeatureName[] : number;

/** The public options, resolved: one field per row of the schema. */
export type PublicWorkerOptions = { -readonly [K in PublicOptionName]: ValueOf<(typeof WORKER_OPTION_SCHEMA)[K]> };

/** The public options a site gives (all optional); `features` also as a comma-separated string. */
export type PublicWorkerOptionsInput = Partial<Omit<PublicWorkerOptions, 'features'>> & { features?: string | readonly string[] };

/** The names of the numeric public options of one scope. */
export function numericOptionNames(scope: OptionScope): PublicOptionName[] {
  return (Object.keys(WORKER_OPTION_SCHEMA) as PublicOptionName[]).filter((name) => {
    const spec: OptionSpec = WORKER_OPTION_SCHEMA[name];
    return spec.scope === scope && (spec.kind === 'number' || spec.kind === 'integer');
  });
}

/**
 * The worker's internal constants (no longer options; issue 26 §3). Tests and benches
 * override them through the internal overrides (config.ts).
 */
export const WORKER_INTERNALS = Object.freeze({
  /** Latency-table and bindings writes to IndexedDB are batched at most this often: off the hot path, and a crash loses at most a second of samples. */
  flushDelayMs: 1_000,
  /** Recent decisions and events the state snapshot keeps: a dashboard's screenful, a few kilobytes of memory. */
  historySize: 200,
  /**
   * Bodies of at least this many bytes (by Content-Length), or of unknown length, resume
   * from another replica when they break off (resumable-body.ts). Smaller bodies arrive in a
   * segment or two, and piping each body through the worker's JavaScript costs a few tenths
   * of a millisecond (measured in issue 22's per-request bench).
   */
  resumeMinBytes: 64 * 1_024,
  /** Offline copies kept; the least recently used go first. offlineMaxBytes is the bound that matters; this one keeps the index small. */
  offlineMaxEntries: 1_000,
});

export type WorkerInternals = { -readonly [K in keyof typeof WORKER_INTERNALS]: number };

/** Bounds of the worker's internal constants when a test or bench overrides them. */
export const WORKER_INTERNAL_BOUNDS: Readonly<Record<keyof WorkerInternals, readonly [number, number]>> = {
  flushDelayMs: [0, 60_000],
  historySize: [1, 5_000],
  resumeMinBytes: [0, Number.MAX_SAFE_INTEGER],
  offlineMaxEntries: [0, 1_000_000],
};
