/**
 * The client delay (client-delay.ts): the time a real client adds to each exchange, replayed
 * by scenario time, as the browser evaluation feeds it in (issue 11: browser/simulator
 * agreement). A constant delay compresses every ratio towards 1; a noisy one (the same mean)
 * also makes a learning policy pick the best replica less often, as the worker does on a
 * loaded machine.
 */
import { loadScenario, parseScenario, scaleScenarioTime } from '@webpp/netem';
import { describe, expect, it } from 'vitest';
import { clientDelayFromSamples, constantClientDelay, optimalPolicy, registryPolicy, simulate, singleServerPolicy } from '../src/index.js';
import type { ClientDelay, ClientDelaySample, Policy, SimulationResult } from '../src/index.js';

describe('clientDelayFromSamples', () => {
  const samples: ClientDelaySample[] = [
    { atMs: 0, firstByteMs: 10, bodyMs: 1 },
    { atMs: 1000, firstByteMs: 500, bodyMs: 50 },
    { atMs: 1010, firstByteMs: 20, bodyMs: 2 },
    { atMs: 1020, firstByteMs: 30, bodyMs: 3 },
    { atMs: 5000, firstByteMs: -7, bodyMs: -1 },
  ];

  it('is the median of the nearest samples, per part, so that one context\'s stall is voted down', () => {
    const delay = clientDelayFromSamples(samples, 3);
    expect(delay.at(1010)).toEqual({ firstByteMs: 30, bodyMs: 3 });
    expect(clientDelayFromSamples(samples, 1).at(1001)).toEqual({ firstByteMs: 500, bodyMs: 50 });
    // Before the first sample and after the last: the nearest ones.
    expect(delay.at(-500)).toEqual({ firstByteMs: 20, bodyMs: 2 });
    expect(clientDelayFromSamples(samples, 1).at(9000)).toEqual({ firstByteMs: 0, bodyMs: 0 }); // a negative sample counts as 0
  });

  it('is no delay without samples, and refuses a bad neighbour count', () => {
    expect(clientDelayFromSamples([]).at(123)).toEqual({ firstByteMs: 0, bodyMs: 0 });
    expect(() => clientDelayFromSamples(samples, 0)).toThrow(RangeError);
  });
});

describe('the simulator with a client delay', () => {
  it('delays the head by firstByteMs and the end of the body by both parts, on a fixed link', () => {
    const scenario = parseScenario({
      formatVersion: 1,
      name: 'fixed',
      durationMs: 10_000,
      servers: { A: { link: { delayMs: 40, bandwidthBytesPerSec: 1_000_000 } } },
      workload: { clients: 1, requestsPerClient: 20, fileSizesBytes: [100_000] },
    });
    const run = (clientDelay?: ClientDelay): SimulationResult => simulate({ scenario, policy: singleServerPolicy('A'), ...(clientDelay ? { clientDelay } : {}) });
    expect(run().responseTime.meanMs).toBeCloseTo(140, 6);
    expect(run(constantClientDelay(30, 25)).responseTime.meanMs).toBeCloseTo(195, 6);
  });

  // peak, compressed to 60 s as the browser bench runs it: the best server changes twice.
  const peak = scaleScenarioTime(loadScenario('peak'), 0.2);
  const workload = { clients: 1, durationMs: peak.durationMs, requestsPerClient: 2000 };
  const ratio = (policy: () => Policy, clientDelay: ClientDelay): { ratio: number; result: SimulationResult } => {
    const result = simulate({ scenario: peak, policy: policy(), workload, clientDelay });
    const optimal = simulate({ scenario: peak, policy: optimalPolicy(), workload, clientDelay });
    return { ratio: result.responseTime.meanMs / optimal.responseTime.meanMs, result };
  };
  // A loaded machine: mostly 20 ms, a 600 ms stall every 0.7 s; and a constant of the same mean.
  const noisySamples = Array.from({ length: 700 }, (_, i) => ({ atMs: i * 100, firstByteMs: i % 7 === 0 ? 600 : 20, bodyMs: 10 }));
  const sameMean = constantClientDelay((600 + 6 * 20) / 7, 10);

  it('compresses a slow single server\'s ratio towards 1 (the same time added to both sides)', () => {
    const without = ratio(() => singleServerPolicy('A'), constantClientDelay(0)).ratio;
    const withDelay = ratio(() => singleServerPolicy('A'), constantClientDelay(200)).ratio;
    expect(without).toBeGreaterThan(1.5);
    expect(withDelay).toBeLessThan(without - 0.2);
    expect(withDelay).toBeGreaterThan(1);
  });

  // The paper's policy (its latest samples decide): the webpp engine became robust to this noise
  // in session 15 (best-server share 0.81 with the constant delay, 0.82 with the noisy one).
  it('makes a policy led by its latest samples pick the best server less often when the delay is noisy, not when it is constant', () => {
    const quiet = ratio(() => registryPolicy('paper'), sameMean);
    // Averaged over the seven places the stall can fall in its 0.7 s cycle: one placement alone
    // is chaotic (a single stall landing on a switch of the best server moves the whole run; the
    // placement at i % 7 === 0 gave a best-server share of 0.80 on Node 20 and 0.86 on Node 24).
    const phases = Array.from({ length: 7 }, (_, phase) =>
      ratio(
        () => registryPolicy('paper'),
        clientDelayFromSamples(noisySamples.map((sample, i) => ({ ...sample, firstByteMs: i % 7 === phase ? 600 : 20 })), 1),
      ),
    );
    const mean = (values: number[]): number => values.reduce((sum, value) => sum + value, 0) / values.length;
    expect(mean(phases.map((phase) => phase.result.bestServerShare))).toBeLessThan(quiet.result.bestServerShare - 0.1);
    expect(mean(phases.map((phase) => phase.ratio))).toBeGreaterThan(quiet.ratio);
  });
});

describe('learnt sizes (SimulationOptions.learnSizes)', () => {
  // A policy that serves everything from A after 10 ms and notes what each request let it plan with.
  const recordingPolicy = (seen: { client: number; sizeBytes: number; sizeKnown: boolean }[]): Policy => ({
    name: 'recording',
    description: 'serves from A after 10 ms',
    start: (environment) => ({
      client: () => ({
        request: (request, done) => {
          seen.push({ client: request.client, sizeBytes: request.sizeBytes, sizeKnown: request.sizeKnown ?? true });
          const timer = environment.queue.after(10, () => done({ ok: true, server: 'A' }));
          return () => environment.queue.cancel(timer);
        },
      }),
    }),
  });
  const scenario = parseScenario({
    formatVersion: 1,
    name: 'two-sizes',
    durationMs: 10_000,
    servers: { A: { link: { delayMs: 5 } } },
    workload: { clients: 2, requestsPerClient: 4, fileSizesBytes: [500, 50_000] },
  });

  it('plans each client\'s first request for a resource without its size, and later ones with it, as the worker does', () => {
    const seen: { client: number; sizeBytes: number; sizeKnown: boolean }[] = [];
    simulate({ scenario, policy: recordingPolicy(seen), learnSizes: true });
    const firstOfEach = (client: number): boolean[] => seen.filter((request) => request.client === client).map((request) => request.sizeKnown);
    expect(firstOfEach(0)).toEqual([false, false, true, true]);
    expect(firstOfEach(1)).toEqual([false, false, true, true]);
    const always: typeof seen = [];
    simulate({ scenario, policy: recordingPolicy(always) });
    expect(always.every((request) => request.sizeKnown)).toBe(true);
  });
});
