import { describe, expect, it } from 'vitest';
import { generateWorld, isHeldOut } from '@webpp/netem';
import { FULL_SAMPLE, STRATA, generatedSample, quickSample, stratumOf, troubleOf, workloadBytes } from './sample.js';

describe('the stratified sample of generated worlds', () => {
  const sample = generatedSample();

  it('has at least 30 worlds: one training and two held-out worlds from each of the 12 strata', () => {
    expect(sample.length).toBeGreaterThanOrEqual(30);
    expect(STRATA).toHaveLength(12);
    for (const stratum of STRATA) {
      const mine = sample.filter((world) => world.stratum === stratum);
      expect(mine.filter((world) => !world.heldOut), stratum).toHaveLength(FULL_SAMPLE.training);
      expect(mine.filter((world) => world.heldOut), stratum).toHaveLength(FULL_SAMPLE.heldOut);
    }
  });

  it('says truly which worlds are held out, and each world is in its own stratum and within the browser budget', () => {
    for (const sampled of sample) {
      const world = generateWorld(sampled.seed);
      expect(sampled.heldOut).toBe(isHeldOut(sampled.seed));
      expect(sampled.stratum).toBe(stratumOf(world));
      expect(world.scenario.durationMs).toBeLessThanOrEqual(FULL_SAMPLE.maxHorizonMs);
      expect(workloadBytes(world)).toBeLessThanOrEqual(FULL_SAMPLE.maxBytes);
    }
    expect(new Set(sample.map((world) => world.seed)).size).toBe(sample.length);
  });

  it('is the same every time (fixed in code, not drawn per run)', () => {
    expect(generatedSample()).toEqual(sample);
  });

  it('--quick takes a few training worlds only', () => {
    const quick = quickSample();
    expect(quick.length).toBeGreaterThan(0);
    expect(quick.length).toBeLessThanOrEqual(3);
    expect(quick.every((world) => !world.heldOut)).toBe(true);
  });
});

describe('the kind of trouble of a world', () => {
  it('is failing with an outage, a flap or a brownout; moving with a drift, a rotation or a bandwidth step; steady otherwise', () => {
    expect(troubleOf(['page', 'stalls:A', 'outage:B', 'drift:A'])).toBe('failing');
    expect(troubleOf(['brownout:C'])).toBe('failing');
    expect(troubleOf(['flap:A'])).toBe('failing');
    expect(troubleOf(['rotation', 'sequential'])).toBe('moving');
    expect(troubleOf(['bandwidth-step:A'])).toBe('moving');
    expect(troubleOf(['stalls:A', 'capacity:B', 'page', 'h2', 'repeat:40%'])).toBe('steady');
  });
});
