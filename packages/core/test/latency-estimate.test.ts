import { describe, expect, it } from 'vitest';
import {
  effectiveSampleCount,
  effectiveSampleWindow,
  ewmaMean,
  ewmaVariance,
  foldSample,
  latencyPercentileMs,
  percentileOfMeanMs,
} from '@webpp/core';

describe('eq. (2) EWMA mean', () => {
  it('weights the new sample by r', () => {
    // 0.05·100 + 0.95·200 = 5 + 190
    expect(ewmaMean(100, 200, 0.95)).toBeCloseTo(195, 12);
    // 0.5·100 + 0.5·200
    expect(ewmaMean(100, 200, 0.5)).toBe(150);
    expect(ewmaMean(100, 200, 1)).toBe(200);
  });
});

describe('eq. (3) EWMA variance', () => {
  it('uses the deviation from the new mean', () => {
    // 0.05·400 + 0.95·(200 − 195)² = 20 + 23.75
    expect(ewmaVariance(400, 200, 195, 0.95)).toBeCloseTo(43.75, 12);
    // 0.5·1250 + 0.5·(100 − 125)² = 625 + 312.5
    expect(ewmaVariance(1250, 100, 125, 0.5)).toBe(937.5);
  });
});

describe('foldSample', () => {
  it('takes the first sample as the initial estimate (sample_0 of eq. (4))', () => {
    expect(foldSample({ meanMs: 0, varianceMs2: 0, sampleCount: 0 }, 80, 0.95)).toEqual({
      meanMs: 80,
      varianceMs2: 0,
      sampleCount: 1,
    });
  });

  it('follows eq. (2) and (3) over a worked sequence 100, 200, 100 with r = 0.5', () => {
    let moments = { meanMs: 0, varianceMs2: 0, sampleCount: 0 };
    for (const sample of [100, 200, 100]) moments = foldSample(moments, sample, 0.5);
    // mean 100 → 150 → 125; variance 0 → 0.5·50² = 1250 → 0.5·1250 + 0.5·25² = 937.5
    expect(moments).toEqual({ meanMs: 125, varianceMs2: 937.5, sampleCount: 3 });
  });
});

describe('eq. (5) effective window', () => {
  it('is the smallest m whose newest samples hold share p of the weight', () => {
    // r = 0.95: one sample holds 95 %, two hold 99.75 %.
    expect(effectiveSampleWindow(0.95, 0.99)).toBe(2);
    expect(effectiveSampleWindow(0.95, 0.95)).toBe(1);
    // r = 0.5: 1 − 0.5⁶ = 0.984 < 0.99 ≤ 1 − 0.5⁷ = 0.992
    expect(effectiveSampleWindow(0.5, 0.99)).toBe(7);
    // exact boundary: 1 − 0.5² = 0.75
    expect(effectiveSampleWindow(0.5, 0.75)).toBe(2);
    // r = 0.1, p = 0.9: ln 0.1 / ln 0.9 = 21.85
    expect(effectiveSampleWindow(0.1, 0.9)).toBe(22);
    expect(effectiveSampleWindow(1, 0.99)).toBe(1);
  });

  it('caps n of eq. (1) at the window and keeps it >= 1', () => {
    expect(effectiveSampleCount(1000, 0.95)).toBe(2);
    expect(effectiveSampleCount(3, 0.5)).toBe(3);
    expect(effectiveSampleCount(0, 0.5)).toBe(1);
  });
});

describe('eq. (1) and the timeout percentile', () => {
  it('adds c·sd/sqrt(n) to the mean', () => {
    // 125 + 0.125661·sqrt(937.5)/sqrt(3) = 125 + 0.125661·17.6777
    expect(percentileOfMeanMs(125, 937.5, 3, 0.125661346855074)).toBeCloseTo(127.2214, 4);
    // 195 + 0.125661·sqrt(43.75)/sqrt(2)
    expect(percentileOfMeanMs(195, 43.75, 2, 0.125661346855074)).toBeCloseTo(195.5877, 4);
  });

  it('a single request percentile has no 1/sqrt(n)', () => {
    // 125 + 3.090232·30.6186
    expect(latencyPercentileMs(125, 937.5, 3.090232306167814)).toBeCloseTo(219.6187, 3);
  });
});
