/**
 * Seeded random numbers for repeatable runs: xoshiro128** seeded through the cyrb128
 * string hash. Never Math.random: the same seed must give the same delays, every run,
 * in the emulator and in the simulator alike.
 */

/** Uniform random numbers in [0, 1). Same shape as @webpp/core's RandomSource. */
export type RandomSource = () => number;

/** A seed: any number or string. Several parts are joined into one key. */
export type SeedPart = string | number;

/** cyrb128: a fast 128-bit string hash, used only to spread seeds over the PRNG state. */
function cyrb128(text: string): [number, number, number, number] {
  let h1 = 1779033703;
  let h2 = 3144134277;
  let h3 = 1013904242;
  let h4 = 2773480762;
  for (let i = 0; i < text.length; i++) {
    const k = text.charCodeAt(i);
    h1 = h2 ^ Math.imul(h1 ^ k, 597399067);
    h2 = h3 ^ Math.imul(h2 ^ k, 2869860233);
    h3 = h4 ^ Math.imul(h3 ^ k, 951274213);
    h4 = h1 ^ Math.imul(h4 ^ k, 2716044179);
  }
  h1 = Math.imul(h3 ^ (h1 >>> 18), 597399067);
  h2 = Math.imul(h4 ^ (h2 >>> 22), 2869860233);
  h3 = Math.imul(h1 ^ (h3 >>> 17), 951274213);
  h4 = Math.imul(h2 ^ (h4 >>> 19), 2716044179);
  h1 ^= h2 ^ h3 ^ h4;
  h2 ^= h1;
  h3 ^= h1;
  h4 ^= h1;
  return [h1 >>> 0, h2 >>> 0, h3 >>> 0, h4 >>> 0];
}

/** The key that names one random stream, e.g. seedKey(42, 'A') → "42\u0000A". */
export function seedKey(parts: readonly SeedPart[]): string {
  return parts.map(String).join('\u0000');
}

/**
 * A xoshiro128** generator whose state is derived from the seed parts. Equal parts give
 * equal sequences; different parts give independent-looking sequences.
 */
export function createRandom(...parts: SeedPart[]): RandomSource {
  let [a, b, c, d] = cyrb128(seedKey(parts));
  if ((a | b | c | d) === 0) a = 1; // xoshiro must not start from the all-zero state
  return () => {
    const t = b << 9;
    let r = Math.imul(b, 5);
    r = Math.imul((r << 7) | (r >>> 25), 9);
    c ^= a;
    d ^= b;
    b ^= c;
    a ^= d;
    c ^= t;
    d = (d << 11) | (d >>> 21);
    return (r >>> 0) / 4294967296;
  };
}
