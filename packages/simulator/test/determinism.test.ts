/**
 * The simulator's figures depend on the seed alone (issue 22: the benches that judge the engine
 * must give the same rows on any machine, under any load, in any number of processes).
 *
 * A world runs synchronously on the event queue's virtual clock, so the only ways real time or
 * load could reach a row are reads of a real clock or of an unseeded random source on the
 * simulated path, and state left behind in a module by an earlier world of the same process
 * (the generalization bench's shards each run many seeds, a different mix per --workers).
 * Both are checked here: every real clock and Math.random throw while a world runs, and a
 * world run after other worlds gives the rows it gives first in a fresh process.
 */
import { BUILTIN_SCENARIOS, loadScenario, scaleScenarioTime } from '@webpp/netem';
import { describe, expect, it } from 'vitest';
import { runSeed } from '../src/generalization.js';
import { registryPolicy } from '../src/policies/engine-policies.js';
import { simulate } from '../src/simulation.js';

/** Training seeds of unlike worlds: pages over h2 with a flapping replica (2), a sequential HTTP/1.1 visit with stalls (7), an outage (10). */
const SEEDS = [2, 7, 10];

/** Runs `body` with every real clock, real timer and Math.random replaced by a function that throws; the real ones are back on return. */
function withoutRealTime<T>(body: () => T): T {
  const saved: Array<[object, string, unknown]> = [];
  const forbid = (owner: object, name: string): void => {
    saved.push([owner, name, (owner as Record<string, unknown>)[name]]);
    Object.defineProperty(owner, name, {
      configurable: true,
      writable: true,
      value: () => {
        throw new Error(`the simulated path called ${name}`);
      },
    });
  };
  try {
    forbid(Math, 'random');
    forbid(Date, 'now');
    forbid(performance, 'now');
    for (const name of ['setTimeout', 'setInterval', 'setImmediate', 'queueMicrotask']) forbid(globalThis, name);
    return body();
  } finally {
    for (const [owner, name, value] of saved.reverse()) Object.defineProperty(owner, name, { configurable: true, writable: true, value });
  }
}

describe('the simulator depends on the seed alone', () => {
  it('a generated world reads no real clock, timer or Math.random, and gives the same rows after other worlds ran in the process', () => {
    // First of all in this process: as a shard's first seed.
    const first = SEEDS.map((seed) => withoutRealTime(() => runSeed(seed)));
    // Then again, each after the others (as a later seed of a shard, or of another --workers split), in reverse order.
    const again = [...SEEDS].reverse().map((seed) => runSeed(seed)).reverse();
    expect(again).toEqual(first);
    // The rows are real runs: every policy served requests.
    for (const { rows } of first) for (const row of rows) expect(row.failed_requests).toBeLessThan(row.requests);
  });

  it('a scenario as the nine run it (engine-v3.bench.ts: 60 s, one client, 15 ms service) reads no real clock or Math.random, and repeats', () => {
    const scenario = loadScenario('peak');
    expect(BUILTIN_SCENARIOS).toContain('peak');
    const sixtySeconds = scaleScenarioTime(scenario, Math.min(1, 60_000 / scenario.durationMs));
    const run = (seed: number) => simulate({ scenario: sixtySeconds, policy: registryPolicy('webpp', {}, 'webpp'), seed, workload: { clients: 1 }, serviceMs: 15 });
    const first = withoutRealTime(() => [run(1), run(2)]);
    const again = [run(2), run(1)].reverse();
    expect(again).toEqual(first);
  });
});
