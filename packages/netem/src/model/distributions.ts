/**
 * Delay distributions, all parameterised by their mean (and standard deviation or shape)
 * in milliseconds, so that scenarios read alike whatever the shape and so that the
 * schedule can ramp one value smoothly into another.
 */
import type { RandomSource } from './random.js';

import { DEFAULT_PARETO_SHAPE, type DistributionSpec, type DurationSpec } from './scenario-schema.js';

export { DISTRIBUTION_NAMES, DEFAULT_PARETO_SHAPE, type DistributionName, type DistributionSpec, type DurationSpec } from './scenario-schema.js';

/** Every draw consumes exactly this many uniforms, whatever the distribution, so that
 * streams stay aligned when a scenario changes a distribution's kind. */
export const UNIFORMS_PER_DRAW = 2;

function clamp(valueMs: number, spec: DistributionSpec): number {
  const low = spec.minMs ?? 0;
  const high = spec.maxMs ?? Number.POSITIVE_INFINITY;
  return Math.min(high, Math.max(low, valueMs));
}

/** A standard normal deviate by the Box–Muller transform of two uniforms. */
function standardNormal(u1: number, u2: number): number {
  return Math.sqrt(-2 * Math.log(1 - u1)) * Math.cos(2 * Math.PI * u2);
}

/** Draws one duration in milliseconds. Consumes exactly UNIFORMS_PER_DRAW uniforms. */
export function sampleDuration(spec: DurationSpec, random: RandomSource): number {
  const u1 = random();
  const u2 = random();
  if (typeof spec === 'number') return Math.max(0, spec);
  const mean = spec.meanMs;
  const sd = spec.stdDevMs ?? 0;
  switch (spec.distribution) {
    case 'constant':
      return clamp(mean, spec);
    case 'uniform':
      // Uniform on mean ± √3·sd has standard deviation sd.
      return clamp(mean + sd * Math.sqrt(3) * (2 * u1 - 1), spec);
    case 'normal':
      return clamp(mean + sd * standardNormal(u1, u2), spec);
    case 'lognormal': {
      if (mean <= 0) return clamp(0, spec);
      // Parameters of the underlying normal so that the lognormal has this mean and sd.
      const sigma2 = Math.log(1 + (sd * sd) / (mean * mean));
      const mu = Math.log(mean) - sigma2 / 2;
      return clamp(Math.exp(mu + Math.sqrt(sigma2) * standardNormal(u1, u2)), spec);
    }
    case 'exponential':
      return clamp(-mean * Math.log(1 - u1), spec);
    case 'pareto': {
      const alpha = spec.shape ?? DEFAULT_PARETO_SHAPE;
      // Pareto(xm, α) has mean α·xm/(α−1), so xm = mean·(α−1)/α; inverse-CDF sampling.
      const scaleMs = (mean * (alpha - 1)) / alpha;
      return clamp(scaleMs / Math.pow(1 - u1, 1 / alpha), spec);
    }
  }
}

/** The mean of a duration spec, ignoring clamps: handy for reports and ranking. */
export function meanOf(spec: DurationSpec): number {
  return typeof spec === 'number' ? spec : spec.meanMs;
}
