/** A manual clock for tests: time moves only when the test says so. */
export class FakeClock {
  constructor(public nowMs = 1_000_000) {}
  readonly now = (): number => this.nowMs;
  advance(ms: number): number {
    this.nowMs += ms;
    return this.nowMs;
  }
}

/** Deterministic uniform numbers in [0, 1) (mulberry32). */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
