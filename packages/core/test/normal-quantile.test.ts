import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { inverseNormalCdf, percentileToZ } from '@webpp/core';

/** Standard normal CDF by composite Simpson integration of the density: independent of AS 241. */
function normalCdf(x: number): number {
  const density = (t: number) => Math.exp((-t * t) / 2) / Math.sqrt(2 * Math.PI);
  const integrate = (a: number, b: number) => {
    const steps = 2000;
    const h = (b - a) / steps;
    let sum = density(a) + density(b);
    for (let i = 1; i < steps; i++) sum += density(a + i * h) * (i % 2 === 0 ? 2 : 4);
    return (sum * h) / 3;
  };
  return x >= 0 ? 0.5 + integrate(0, x) : 0.5 - integrate(x, 0);
}

describe('inverseNormalCdf (c_S of eq. (1))', () => {
  it('matches the paper-relevant constants c_55 and c_99.9', () => {
    expect(percentileToZ(55)).toBeCloseTo(0.1257, 4);
    expect(percentileToZ(99.9)).toBeCloseTo(3.0902, 4);
  });

  it('matches published quantiles to 1e-9', () => {
    const table: [number, number][] = [
      [0.5, 0],
      [0.55, 0.125661346855074],
      [0.9, 1.281551565544601],
      [0.975, 1.959963984540054],
      [0.99, 2.326347874040841],
      [0.999, 3.090232306167814],
      [0.001, -3.090232306167814],
      [0.3, -0.524400512708041],
      [1e-10, -6.361340902404056],
    ];
    for (const [p, z] of table) expect(Math.abs(inverseNormalCdf(p) - z)).toBeLessThan(1e-9);
  });

  it('inverts the normal CDF to 1e-6 across (0, 1)', () => {
    fc.assert(
      fc.property(fc.double({ min: 1e-6, max: 1 - 1e-6, noNaN: true }), (p) => {
        expect(Math.abs(normalCdf(inverseNormalCdf(p)) - p)).toBeLessThan(1e-6);
      }),
      { numRuns: 200 },
    );
  });

  it('is odd and monotone', () => {
    fc.assert(
      fc.property(fc.double({ min: 1e-6, max: 0.5, noNaN: true }), fc.double({ min: 1e-6, max: 0.5, noNaN: true }), (a, b) => {
        // 1 - a is exact enough for a >= 1e-6; smaller a loses digits to floating point, not to AS 241.
        expect(inverseNormalCdf(a) + inverseNormalCdf(1 - a)).toBeCloseTo(0, 6);
        if (a < b) expect(inverseNormalCdf(a)).toBeLessThanOrEqual(inverseNormalCdf(b));
      }),
    );
  });

  it('handles the ends and rejects p outside [0, 1]', () => {
    expect(inverseNormalCdf(0)).toBe(-Infinity);
    expect(inverseNormalCdf(1)).toBe(Infinity);
    expect(inverseNormalCdf(1e-300)).toBeCloseTo(-37.0471, 3);
    for (const p of [-0.1, 1.5, Number.NaN]) expect(() => inverseNormalCdf(p)).toThrow(RangeError);
  });
});
