/**
 * The stratified sample of generated worlds the Chromium evaluation runs (issue 22 §1: "a
 * stratified sample of at least 30 of them"), fixed in code before any result was seen.
 *
 * Strata: workload shape (page bursts / sequential) × replica count (2–3 / 4–6) × trouble
 * (steady: none drawn; moving: drift, rotation or a bandwidth step; failing: an outage, a flap
 * or a brownout) = 12 strata. From each, the first worlds in seed order of the training range
 * and of the held-out range (TRAINING_SEEDS, HELD_OUT_SEEDS of the generator) whose estimated
 * run fits the browser's time budget: `maxHorizonMs` of the generator's own estimate (a world
 * of 100 pages over a 100 kB/s link would take minutes per policy). The cut is by the world's
 * description, never by a result.
 */
import { generateWorld, HELD_OUT_SEEDS, seedsOf, TRAINING_SEEDS } from '@webpp/netem';
import type { GeneratedWorld } from '@webpp/netem';

export type Trouble = 'steady' | 'moving' | 'failing';

export interface SampledWorld {
  seed: number;
  heldOut: boolean;
  /** e.g. "page/2-3/failing". */
  stratum: string;
}

export interface SampleOptions {
  /** Worlds per stratum from the training seeds. */
  training: number;
  /** Worlds per stratum from the held-out seeds. */
  heldOut: number;
  /** Only worlds whose estimated run (the generator's horizon) is at most this long. */
  maxHorizonMs: number;
  /** Only worlds whose workload moves at most this many bytes (every policy moves them at once through one machine). */
  maxBytes: number;
}

/** The full sample: 1 training + 2 held-out worlds per stratum (36 worlds), each at most 30 s by the generator's estimate. */
export const FULL_SAMPLE: SampleOptions = { training: 1, heldOut: 2, maxHorizonMs: 30_000, maxBytes: 40_000_000 };

const FAILING = /^(outage|flap|brownout):/;
const MOVING = /^(drift:|rotation$|bandwidth-step:)/;

export function troubleOf(traits: readonly string[]): Trouble {
  if (traits.some((trait) => FAILING.test(trait))) return 'failing';
  if (traits.some((trait) => MOVING.test(trait))) return 'moving';
  return 'steady';
}

export function stratumOf(world: Pick<GeneratedWorld, 'scenario' | 'workload' | 'traits'>): string {
  const replicas = Object.keys(world.scenario.servers).length;
  return `${world.workload.shape}/${replicas <= 3 ? '2-3' : '4-6'}/${troubleOf(world.traits)}`;
}

/** Every stratum name, in a fixed order. */
export const STRATA: readonly string[] = ['page', 'sequential'].flatMap((shape) => ['2-3', '4-6'].flatMap((replicas) => ['steady', 'moving', 'failing'].map((trouble) => `${shape}/${replicas}/${trouble}`)));

/** The bytes a world's workload moves (each page request once). */
export function workloadBytes(world: Pick<GeneratedWorld, 'workload'>): number {
  return world.workload.clients.flat(2).reduce((sum, resource) => sum + resource.sizeBytes, 0);
}

/** The first `perStratum` fitting worlds of each stratum, scanning `seeds` in order. */
function pick(seeds: readonly number[], perStratum: number, limits: Pick<SampleOptions, 'maxHorizonMs' | 'maxBytes'>, heldOut: boolean): SampledWorld[] {
  const taken = new Map<string, SampledWorld[]>(STRATA.map((stratum) => [stratum, []]));
  for (const seed of seeds) {
    if ([...taken.values()].every((list) => list.length >= perStratum)) break;
    const world = generateWorld(seed);
    if (world.scenario.durationMs > limits.maxHorizonMs || workloadBytes(world) > limits.maxBytes) continue;
    const list = taken.get(stratumOf(world))!;
    if (list.length < perStratum) list.push({ seed, heldOut, stratum: stratumOf(world) });
  }
  return STRATA.flatMap((stratum) => taken.get(stratum)!);
}

/** The sample: training worlds first, then held-out ones, each in stratum order. */
export function generatedSample(options: SampleOptions = FULL_SAMPLE): SampledWorld[] {
  return [...pick(seedsOf(TRAINING_SEEDS), options.training, options, false), ...pick(seedsOf(HELD_OUT_SEEDS), options.heldOut, options, true)];
}

/** `--quick`: one world per shape and trouble from the training seeds only, small enough to try the harness in a few minutes. */
export function quickSample(): SampledWorld[] {
  const all = pick(seedsOf(TRAINING_SEEDS), 1, { maxHorizonMs: 12_000, maxBytes: 15_000_000 }, false);
  return ['page/2-3/steady', 'sequential/2-3/failing', 'page/4-6/moving'].map((stratum) => all.find((world) => world.stratum === stratum)).filter((world): world is SampledWorld => world !== undefined);
}
