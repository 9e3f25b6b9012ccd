import { describe, expect, it } from 'vitest';
import { FAST_PRESET, PAPER_DEFAULTS, resolveSelectionConfig, type SelectionConfig } from '@webpp/core';

describe('PAPER_DEFAULTS (Figure 10)', () => {
  it('holds r = 0.95, TTL = 41 min, F = 28.8 h, S = 55, T = 99.9', () => {
    expect(PAPER_DEFAULTS.ewmaWeight).toBe(0.95);
    expect(PAPER_DEFAULTS.ttlMs).toBe(41 * 60 * 1000);
    expect(PAPER_DEFAULTS.probeIntervalMs).toBe(28.8 * 3600 * 1000);
    expect(PAPER_DEFAULTS.selectPercentile).toBe(55);
    expect(PAPER_DEFAULTS.timeoutPercentile).toBe(99.9);
  });

  it('is frozen, and both presets pass validation', () => {
    expect(Object.isFrozen(PAPER_DEFAULTS)).toBe(true);
    expect(resolveSelectionConfig({}, PAPER_DEFAULTS)).toEqual(PAPER_DEFAULTS);
    expect(resolveSelectionConfig({}, FAST_PRESET)).toEqual(FAST_PRESET);
    expect(FAST_PRESET.ttlMs).toBeLessThan(PAPER_DEFAULTS.ttlMs);
    expect(FAST_PRESET.probeIntervalMs).toBeLessThan(PAPER_DEFAULTS.probeIntervalMs);
  });
});

describe('resolveSelectionConfig', () => {
  it('merges a partial config over the base', () => {
    const config = resolveSelectionConfig({ ttlMs: 5000 }, FAST_PRESET);
    expect(config).toEqual({ ...FAST_PRESET, ttlMs: 5000 });
    expect(resolveSelectionConfig().ttlMs).toBe(PAPER_DEFAULTS.ttlMs);
  });

  it('fills optional fields missing from the base from PAPER_DEFAULTS', () => {
    const { timeoutMeanMultiple: _omitted, ...base } = FAST_PRESET;
    expect(resolveSelectionConfig({}, base).timeoutMeanMultiple).toBe(PAPER_DEFAULTS.timeoutMeanMultiple);
  });

  it('ignores undefined fields', () => {
    expect(resolveSelectionConfig({ ttlMs: undefined })).toEqual(PAPER_DEFAULTS);
  });

  const invalid: [Partial<SelectionConfig>, keyof SelectionConfig][] = [
    [{ ewmaWeight: 0 }, 'ewmaWeight'],
    [{ ewmaWeight: 1.5 }, 'ewmaWeight'],
    [{ ttlMs: 0 }, 'ttlMs'],
    [{ ttlMs: Number.NaN }, 'ttlMs'],
    [{ probeIntervalMs: -1 }, 'probeIntervalMs'],
    [{ maxProbeIntervalMs: 10, probeIntervalMs: 20 }, 'maxProbeIntervalMs'],
    [{ selectPercentile: 100 }, 'selectPercentile'],
    [{ timeoutPercentile: 0 }, 'timeoutPercentile'],
    [{ timeoutFloorMs: 0 }, 'timeoutFloorMs'],
    [{ timeoutMeanMultiple: -1 }, 'timeoutMeanMultiple'],
    [{ timeoutCeilingMs: 10 }, 'timeoutCeilingMs'],
    [{ initialTimeoutMs: 60_000_000 }, 'initialTimeoutMs'],
    [{ ttlMs: '5' as unknown as number }, 'ttlMs'],
  ];
  for (const [partial, field] of invalid) {
    it(`rejects ${JSON.stringify(partial)} naming ${field}`, () => {
      expect(() => resolveSelectionConfig(partial)).toThrow(RangeError);
      expect(() => resolveSelectionConfig(partial)).toThrow(new RegExp(`SelectionConfig\\.${field} `));
    });
  }
});
