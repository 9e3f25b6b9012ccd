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
 * fourteen rows is a few hundred bytes where TypeBox's checker is tens of kilobytes.
 */
import { PAPER_DEFAULTS, WEBPP_DEFAULTS } from '@webpp/core';

/** The opt-in features a site names in `features`, each a script `webpp-sw-<name>.js` (addons.ts). */
export const FEATURE_NAMES = ['batch', 'offline', 'integrity', 'aggregate'] as const;
export type FeatureName = (typeof FEATURE_NAMES)[number];

const DAY_MS = 24 * 60 * 60 * 1_000;
const MAX = Number.MAX_SAFE_INTEGER;

/**
 * A number option; an option of the webpp policy when core's WEBPP_DEFAULTS has its name
 * (its default is then the webpp policy's; the paper's policies have their own, and take
 * the timeouts too), else of the worker.
 */
interface NumberOption {
  kind: 'integer' | 'number';
  default: number;
  min: number;
  max: number;
}

interface PolicyNameOption {
  kind: 'policy';
  default: string;
}

interface FeaturesOption {
  kind: 'features';
  default: readonly FeatureName[];
}

export type OptionSpec = NumberOption | PolicyNameOption | FeaturesOption;

const number = (fallback: number, min: number, max: number): NumberOption => ({ kind: 'number', default: fallback, min, max });
const integer = (fallback: number, min: number, max: number): NumberOption => ({ kind: 'integer', default: fallback, min, max });

export const WORKER_OPTION_SCHEMA = {
  policy: { kind: 'policy', default: 'webpp' } as PolicyNameOption,
  features: { kind: 'features', default: [] } as FeaturesOption,
  timeoutFloorMs: number(WEBPP_DEFAULTS.timeoutFloorMs, 1, 600_000),
  timeoutCeilingMs: number(WEBPP_DEFAULTS.timeoutCeilingMs, 1, 600_000),
  initialTimeoutMs: number(WEBPP_DEFAULTS.initialTimeoutMs, 1, 600_000),
  extraBudgetShare: number(WEBPP_DEFAULTS.extraBudgetShare, 0, 1),
  hedgeBudgetShare: number(WEBPP_DEFAULTS.hedgeBudgetShare, 0, 1),
  ejectAfterFailures: integer(WEBPP_DEFAULTS.ejectAfterFailures, 1, 100),
  probeBackoffCapMs: number(WEBPP_DEFAULTS.probeBackoffCapMs, 1, DAY_MS),
  controlCheckMs: integer(60_000, 0, DAY_MS),
  offRetryMs: integer(60 * 60 * 1_000, 0, 30 * DAY_MS),
  offlineMaxBytes: integer(50 * 1_024 * 1_024, 0, MAX),
  offlineMaxEntryBytes: integer(10 * 1_024 * 1_024, 0, MAX),
  offlineMaxAgeMs: integer(30 * DAY_MS, 0, MAX),
};

export type PublicOptionName = keyof typeof WORKER_OPTION_SCHEMA;

type ValueOf<S> = S extends PolicyNameOption ? string : S extends FeaturesOption ? FeatureName[] : number;

/** The public options, resolved: one field per row of the schema. */
export type PublicWorkerOptions = { -readonly [K in PublicOptionName]: ValueOf<(typeof WORKER_OPTION_SCHEMA)[K]> };

/** The public options a site gives (all optional); `features` also as a comma-separated string. */
export type PublicWorkerOptionsInput = Partial<Omit<PublicWorkerOptions, 'features'>> & { features?: string | readonly string[] };

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

/** Every former option that is no longer public: for the docs' migration note (config.ts warns when one is given). */
export function removedOptionNames(): string[] {
  const names = ['preset', ...Object.keys(PAPER_DEFAULTS), ...Object.keys(WEBPP_DEFAULTS), ...Object.keys(WORKER_INTERNALS)];
  return [...new Set(names)].filter((name) => !Object.hasOwn(WORKER_OPTION_SCHEMA, name));
}
