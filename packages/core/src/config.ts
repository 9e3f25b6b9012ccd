import type { SelectionConfig } from './types.js';

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;

/**
 * The paper's parameter settings (Web++ paper, Figure 10): r = 0.95, TTL = 41 min,
 * default F = 28.8 h, S = 55, T = 99.9. The timeout bounds are ours (docs/selection.md).
 */
export const PAPER_DEFAULTS: Readonly<Required<SelectionConfig>> = Object.freeze({
  ewmaWeight: 0.95,
  ttlMs: 41 * MINUTE_MS,
  probeIntervalMs: 28.8 * HOUR_MS,
  maxProbeIntervalMs: 7 * 24 * HOUR_MS,
  selectPercentile: 55,
  timeoutPercentile: 99.9,
  timeoutFloorMs: 1_000,
  timeoutMeanMultiple: 3,
  timeoutCeilingMs: 15_000,
  initialTimeoutMs: 5_000,
});

/**
 * A preset for demos and sites where minutes matter: same r, S and T as the paper, but
 * entries expire after 20 s and a failed server is re-probed after 2 s (then 4 s, 8 s, ...
 * at most 60 s), so a recovered replica is back in use within about a minute.
 */
export const FAST_PRESET: Readonly<Required<SelectionConfig>> = Object.freeze({
  ewmaWeight: 0.95,
  ttlMs: 20_000,
  probeIntervalMs: 2_000,
  maxProbeIntervalMs: 60_000,
  selectPercentile: 55,
  timeoutPercentile: 99.9,
  timeoutFloorMs: 500,
  timeoutMeanMultiple: 3,
  timeoutCeilingMs: 5_000,
  initialTimeoutMs: 2_000,
});

const CONFIG_KEYS = Object.keys(PAPER_DEFAULTS) as (keyof SelectionConfig)[];


function fail(field: keyof SelectionConfig, value: unknown, rule: string): never {
  throw new RangeError(`SelectionConfig.${field} must be ${rule} (got ${String(value)})`);
}

/**
 * Merges `partial` over `base` (and optional fields missing from both over PAPER_DEFAULTS)
 * and validates the result. Every field of the result is set.
 * @throws RangeError naming the first invalid field.
 */
export function resolveSelectionConfig(
  partial: Partial<SelectionConfig> = {},
  base: Readonly<SelectionConfig> = PAPER_DEFAULTS,
): Required<SelectionConfig> {
  const config = { ...PAPER_DEFAULTS, ...withoutUndefined(base) } as Required<SelectionConfig>;
  for (const key of CONFIG_KEYS) {
    const value = (partial as Record<string, unknown>)[key];
    if (value !== undefined) (config as unknown as Record<string, unknown>)[key] = value;
  }
  for (const key of CONFIG_KEYS) {
    const value = config[key];
    if (typeof value !== 'number' || !Number.isFinite(value)) fail(key, value, 'a finite number');
  }
  if (!(config.ewmaWeight > 0 && config.ewmaWeight <= 1)) fail('ewmaWeight', config.ewmaWeight, 'in (0, 1]');
  if (!(config.ttlMs > 0)) fail('ttlMs', config.ttlMs, '> 0');
  if (!(config.probeIntervalMs > 0)) fail('probeIntervalMs', config.probeIntervalMs, '> 0');
  if (!(config.maxProbeIntervalMs >= config.probeIntervalMs)) {
    fail('maxProbeIntervalMs', config.maxProbeIntervalMs, `>= probeIntervalMs (${config.probeIntervalMs})`);
  }
  if (!(config.selectPercentile > 0 && config.selectPercentile < 100)) {
    fail('selectPercentile', config.selectPercentile, 'in (0, 100)');
  }
  if (!(config.timeoutPercentile > 0 && config.timeoutPercentile < 100)) {
    fail('timeoutPercentile', config.timeoutPercentile, 'in (0, 100)');
  }
  if (!(config.timeoutFloorMs > 0)) fail('timeoutFloorMs', config.timeoutFloorMs, '> 0');
  if (!(config.timeoutMeanMultiple >= 0)) fail('timeoutMeanMultiple', config.timeoutMeanMultiple, '>= 0');
  if (!(config.timeoutCeilingMs >= config.timeoutFloorMs)) {
    fail('timeoutCeilingMs', config.timeoutCeilingMs, `>= timeoutFloorMs (${config.timeoutFloorMs})`);
  }
  if (!(config.initialTimeoutMs >= config.timeoutFloorMs && config.initialTimeoutMs <= config.timeoutCeilingMs)) {
    fail(
      'initialTimeoutMs',
      config.initialTimeoutMs,
      `within [timeoutFloorMs, timeoutCeilingMs] = [${config.timeoutFloorMs}, ${config.timeoutCeilingMs}]`,
    );
  }
  return config;
}

function withoutUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, field]) => field !== undefined)) as Partial<T>;
}
