/**
 * The scenarios of issue 11 exercise the blind spot each one names: checked on the link
 * parameters the emulator and the simulator both draw from (compileScenario), not on a run.
 */
import { describe, expect, it } from 'vitest';
import { compileScenario, meanOf, resolveWorkload } from '../src/model/index.js';
import { loadScenario } from '../src/index.js';

function links(name: string) {
  const scenario = loadScenario(name);
  const timelines = compileScenario(scenario);
  /** Mean time to first byte (delay + first-byte stalls) and mean response time for `sizeBytes` at `atMs`; Infinity in an outage. */
  const expected = (server: string, atMs: number, sizeBytes = 0) => {
    const timeline = timelines.get(server)!;
    if (timeline.outageAt(atMs)) return { ttfbMs: Infinity, totalMs: Infinity };
    const link = timeline.linkAt(atMs);
    const stallMs = link.stall ? link.stall.probability * meanOf(link.stall.durationMs) : 0;
    const ttfbMs = meanOf(link.delayMs) + stallMs;
    return { ttfbMs, totalMs: ttfbMs + (link.bandwidthBytesPerSec ? (sizeBytes / link.bandwidthBytesPerSec) * 1000 : 0), medianDelayMs: meanOf(link.delayMs) };
  };
  const best = (atMs: number, sizeBytes = 0) => [...timelines.keys()].sort((a, b) => expected(a, atMs, sizeBytes).totalMs - expected(b, atMs, sizeBytes).totalMs)[0];
  return { scenario, timelines, expected, best };
}

describe('the scenarios of issue 11', () => {
  it('tail-stalls: A is the fastest without its stalls, but its mean with them is worse than B\'s', () => {
    const { expected, timelines } = links('tail-stalls');
    const stall = timelines.get('A')!.linkAt(0).stall!;
    expect(stall).toMatchObject({ probability: 0.05, durationMs: 1500, phase: 'first-byte' });
    expect(expected('A', 0).medianDelayMs).toBeLessThan(expected('B', 0).medianDelayMs! / 2);
    expect(expected('A', 0).ttfbMs).toBeGreaterThan(expected('B', 0).ttfbMs);
  });

  it('slow-body: A has the fastest first byte, yet 50 KB take about 4× and 500 KB over 10× as long from A as from the best', () => {
    const { scenario, expected, best } = links('slow-body');
    expect(resolveWorkload(scenario).fileSizesBytes).toEqual([51_200, 512_000]);
    const ttfbs = ['A', 'B', 'C'].map((server) => expected(server, 0).ttfbMs);
    expect(Math.min(...ttfbs)).toBe(ttfbs[0]);
    for (const [sizeBytes, factor] of [[51_200, 3.5], [512_000, 10]] as const) {
      expect(best(0, sizeBytes)).toBe('B');
      expect(expected('A', 0, sizeBytes).totalMs / expected('B', 0, sizeBytes).totalMs).toBeGreaterThan(factor);
    }
  });

  it('flapping: A is the best replica for 4 s, then the worst for 4 s, for the whole run', () => {
    const { scenario, best, expected } = links('flapping');
    for (let phaseStartMs = 0; phaseStartMs < scenario.durationMs; phaseStartMs += 4_000) {
      const good = (phaseStartMs / 4_000) % 2 === 0;
      const atMs = phaseStartMs + 2_000;
      if (good) expect(best(atMs, 5_120)).toBe('A');
      else expect(expected('A', atMs, 5_120).totalMs).toBeGreaterThan(Math.max(expected('B', atMs, 5_120).totalMs, expected('C', atMs, 5_120).totalMs));
    }
  });

  it('rotating: the best server moves on every 10 s, A → B → C → A → B → C', () => {
    const { best } = links('rotating');
    const bests = [5, 15, 25, 35, 45, 55].map((seconds) => best(seconds * 1000, 5_120));
    expect(bests).toEqual(['A', 'B', 'C', 'A', 'B', 'C']);
  });

  it('recovery: A is the best, partitioned from 3 s to 25 s, and the best again after', () => {
    const { timelines, best } = links('recovery');
    expect(best(1_000, 5_120)).toBe('A');
    expect(timelines.get('A')!.outageAt(10_000)).toMatchObject({ mode: 'hang' });
    expect(best(10_000, 5_120)).toBe('B');
    expect(timelines.get('A')!.outageAt(26_000)).toBeUndefined();
    expect(best(26_000, 5_120)).toBe('A');
    expect(best(59_000, 5_120)).toBe('A');
  });
});
