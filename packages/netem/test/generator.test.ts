import { describe, expect, it } from 'vitest';
import { GENERATED_RANGES, HELD_OUT_SEEDS, TRAINING_SEEDS, generateWorld, isHeldOut, parseScenario, seedsOf, type GeneratedWorld } from '../src/model/index.js';

const worlds: GeneratedWorld[] = seedsOf({ first: 1, count: 300 }).map((seed) => generateWorld(seed));
const meanOf = (delay: unknown): number => (typeof delay === 'number' ? delay : (delay as { meanMs: number }).meanMs);

describe('generateWorld', () => {
  it('draws the same world for the same seed, and different worlds for different seeds', () => {
    expect(generateWorld(42)).toEqual(generateWorld(42));
    expect(JSON.stringify(generateWorld(42))).toBe(JSON.stringify(generateWorld(42)));
    expect(generateWorld(43)).not.toEqual(generateWorld(42));
  });

  it('fixes a held-out range apart from the training range', () => {
    const training = new Set(seedsOf(TRAINING_SEEDS));
    expect(seedsOf(HELD_OUT_SEEDS).some((seed) => training.has(seed))).toBe(false);
    expect(training.size + HELD_OUT_SEEDS.count).toBeGreaterThanOrEqual(500);
    expect(isHeldOut(HELD_OUT_SEEDS.first)).toBe(true);
    expect(isHeldOut(TRAINING_SEEDS.first)).toBe(false);
    expect(generateWorld(HELD_OUT_SEEDS.first).heldOut).toBe(true);
  });

  it('always gives a valid scenario whose trouble falls inside its timeline', () => {
    for (const world of worlds) {
      expect(() => parseScenario(world.scenario)).not.toThrow();
      for (const server of Object.values(world.scenario.servers)) {
        for (const outage of server.outages ?? []) expect(outage.fromMs).toBeLessThan(world.scenario.durationMs);
        for (const brownout of server.brownouts ?? []) expect(brownout.fromMs).toBeLessThan(world.scenario.durationMs);
      }
    }
  });

  it('covers the issue\'s ranges: 2–6 replicas, first byte 5–400 ms, 100 kB/s–50 MB/s shared, 1 KB–5 MB files', () => {
    const replicas = new Set(worlds.map((world) => Object.keys(world.scenario.servers).length));
    expect([...replicas].sort()).toEqual([2, 3, 4, 5, 6]);
    const links = worlds.flatMap((world) => Object.values(world.scenario.servers));
    const firstBytes = links.map((server) => meanOf(server.link.delayMs));
    expect(Math.min(...firstBytes)).toBeGreaterThanOrEqual(GENERATED_RANGES.firstByteMs[0]);
    expect(Math.max(...firstBytes)).toBeLessThanOrEqual(GENERATED_RANGES.firstByteMs[1]);
    // Log-uniform: every decade is well represented.
    expect(firstBytes.filter((ms) => ms < 15).length).toBeGreaterThan(firstBytes.length / 10);
    expect(firstBytes.filter((ms) => ms > 150).length).toBeGreaterThan(firstBytes.length / 10);
    const bandwidths = links.map((server) => server.link.bandwidthBytesPerSec!);
    expect(Math.min(...bandwidths)).toBeGreaterThanOrEqual(GENERATED_RANGES.bandwidthBytesPerSec[0]);
    expect(Math.max(...bandwidths)).toBeLessThanOrEqual(GENERATED_RANGES.bandwidthBytesPerSec[1]);
    expect(bandwidths.filter((bytes) => bytes < 500_000).length).toBeGreaterThan(bandwidths.length / 10);
    expect(bandwidths.filter((bytes) => bytes > 10_000_000).length).toBeGreaterThan(bandwidths.length / 10);
    expect(links.every((server) => server.linkSharing === 'shared')).toBe(true);
    const sizes = worlds.flatMap((world) => world.workload.clients.flat(2).map((resource) => resource.sizeBytes));
    expect(Math.min(...sizes)).toBeGreaterThanOrEqual(GENERATED_RANGES.fileBytes[0]);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(GENERATED_RANGES.fileBytes[1]);
    expect(sizes.filter((bytes) => bytes < 5_000).length).toBeGreaterThan(100);
    expect(sizes.filter((bytes) => bytes > 1_000_000).length).toBeGreaterThan(100);
  });

  it('draws every kind of trouble, concurrency limits and heavy-tailed stalls', () => {
    const traits = worlds.flatMap((world) => world.traits.map((trait) => trait.split(':')[0]));
    for (const kind of ['outage', 'flap', 'brownout', 'drift', 'rotation', 'bandwidth-step', 'stalls', 'capacity']) {
      expect(traits.filter((trait) => trait === kind).length, kind).toBeGreaterThan(10);
    }
    const stalls = worlds.flatMap((world) => Object.values(world.scenario.servers).flatMap((server) => (server.link.stall ? [server.link.stall] : [])));
    expect(stalls.every((stall) => typeof stall.durationMs === 'object' && stall.durationMs.distribution === 'pareto' && stall.probability < 0.1)).toBe(true);
    // Some worlds are calm: not every world is in trouble.
    expect(worlds.filter((world) => !world.traits.some((trait) => /^(outage|flap|brownout|drift|rotation|bandwidth-step)/.test(trait))).length).toBeGreaterThan(20);
  });

  it('draws sequential and page-shaped workloads, over HTTP/1.1 (6 per host) and HTTP/2, with URLs that repeat and URLs seen once', () => {
    const pageWorlds = worlds.filter((world) => world.workload.shape === 'page');
    const sequential = worlds.filter((world) => world.workload.shape === 'sequential');
    expect(pageWorlds.length).toBeGreaterThan(100);
    expect(sequential.length).toBeGreaterThan(100);
    for (const world of pageWorlds) {
      for (const page of world.workload.clients.flat()) {
        expect(page.length).toBeGreaterThanOrEqual(GENERATED_RANGES.pageResources[0]);
        expect(page.length).toBeLessThanOrEqual(GENERATED_RANGES.pageResources[1]);
      }
    }
    for (const world of sequential) expect(world.workload.clients.flat().every((page) => page.length === 1)).toBe(true);
    expect(worlds.filter((world) => world.workload.http === 'http/1.1').every((world) => world.workload.connectionsPerHost === 6)).toBe(true);
    expect(worlds.filter((world) => world.workload.http === 'h2').every((world) => world.workload.connectionsPerHost === null)).toBe(true);
    expect(worlds.filter((world) => world.workload.http === 'h2').length).toBeGreaterThan(100);
    let repeated = 0;
    let once = 0;
    let cacheBusted = 0;
    for (const world of worlds) {
      const counts = new Map<string, number>();
      for (const resource of world.workload.clients.flat(2)) counts.set(resource.url, (counts.get(resource.url) ?? 0) + 1);
      for (const [url, count] of counts) {
        if (count > 1) repeated++;
        else once++;
        if (url.includes('?v=')) cacheBusted++;
      }
    }
    expect(repeated).toBeGreaterThan(1_000);
    expect(once).toBeGreaterThan(1_000);
    expect(cacheBusted).toBeGreaterThan(500);
  });
});

describe('generateWorld outages', () => {
  it('never takes every replica down at once', () => {
    for (const world of worlds) {
      const windows = Object.values(world.scenario.servers).map((server) => server.outages ?? []);
      const edges = windows.flat().flatMap((window) => [window.fromMs, (window.fromMs + window.toMs) / 2]);
      for (const tMs of edges) {
        const up = windows.filter((own) => !own.some((window) => window.fromMs <= tMs && tMs < window.toMs));
        expect(up.length, `seed ${world.seed} at ${tMs} ms`).toBeGreaterThan(0);
      }
    }
  });
});
