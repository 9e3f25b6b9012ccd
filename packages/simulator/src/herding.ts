/**
 * The herding experiment (issue 13 §4; Fei et al., INFOCOM 1998, Section 5.2, Figures 8–10):
 * many clients, each with its own engine and policy, against servers of finite capacity
 * (server-queue.ts: M/M/c FCFS), on the simulator's virtual clock.
 *
 * Setup: every client sits in the same region, so the servers rank alike for all of them
 * (server i is 5·i ms further than server 0, as Fei's clients at Georgia Tech all saw the
 * same nearest servers): selection by latency alone sends the herd to one server. Each
 * server has `workers` workers with a mean service time chosen so that, with the load
 * spread evenly, the servers would run at `utilisation`. Clients are closed loops: a request,
 * a think time, the next request; they start spread over the first think time.
 */
import { createPolicy } from '@webpp/core';
import { enginePolicy } from './engine-driver.js';
import type { Policy } from './policy.js';
import { simulate, type SimulationResult } from './simulation.js';
import { summarize } from './statistics.js';

export interface HerdingConfig {
  clients: number;
  servers: number;
  /** A name of HERDING_POLICIES. */
  policy: string;
  seed?: number;
  /** Virtual duration of the run (ms). Default 120 000. */
  durationMs?: number;
  /** Pause between a response and the client's next request (ms). Default 5 000. */
  thinkTimeMs?: number;
  /** Workers per server (c). Default 4. */
  workers?: number;
  /** Utilisation ρ of every server if the load were spread evenly. Default 0.5. */
  utilisation?: number;
  /** Clients start evenly over this long (ms). Default 20 000. */
  startSpreadMs?: number;
  /**
   * Time at the start left out of load_cv, mean and p95 (ms): the clients still starting
   * (over startSpreadMs), their tables cold. Default 40 000: twice the start spread, so that
   * the rows describe the load the clients settle into, not their arrival.
   */
  warmUpMs?: number;
}

export interface HerdingRow {
  clients: number;
  servers: number;
  policy: string;
  mean_ms: number;
  p95_ms: number;
  load_cv: number;
  source: 'simulator';
  requests: number;
  failed: number;
  extra_requests_pct: number;
  /** The service time that gives each server `utilisation` under an even spread (ms). */
  service_mean_ms: number;
  workers: number;
  /** Requests (every exchange) that arrived at each server per second. */
  load: Record<string, number[]>;
}

const FILE_BYTES = 8_192;
const BASE_DELAY_MS = 30;
const DELAY_STEP_MS = 20;

/** The four policies of issue 13 §4, Fei's tight thresholds (Figure 9: 0.05 / 0.05), and two variants that tell push and sets apart. */
export const HERDING_POLICIES: Readonly<Record<string, { registry: string; options?: Record<string, unknown>; description: string }>> = {
  paper: { registry: 'paper', description: "the paper's extended Refresh (PAPER_DEFAULTS)" },
  'webpp-no-sets': {
    registry: 'webpp',
    options: { equivalentSetJoinRatio: 0, equivalentSetLeaveRatio: 0, pushMaxAgeMs: 0 },
    description: 'the engine v2 default without push and sets (the single best)',
  },
  webpp: {
    registry: 'webpp',
    description:
      'the default: push (the change of S steers every plan; A = R/S after 30 s of silence), equivalent-server sets τ_join 0.1, τ_leave 0.4, the load spread by pushed utilisation with inertia, one extra budget',
  },
  random: { registry: 'random', description: 'a uniformly random replica per request' },
  'webpp-tight': {
    registry: 'webpp',
    options: { equivalentSetJoinRatio: 0.05, equivalentSetLeaveRatio: 0.05, loadSpreadShare: 0 },
    description: "push and sets with Fei's tight thresholds τ_join = τ_leave = 0.05 (Figure 9), no load spread",
  },
  'webpp-no-spread': {
    registry: 'webpp',
    options: { loadSpreadShare: 0 },
    description: "push and Fei's sets (τ_join 0.1, τ_leave 0.4) without the load spread: the default of the previous round",
  },
  'webpp-no-inertia': {
    registry: 'webpp',
    options: { spreadRedrawShare: 1 },
    description: 'the default, but every request draws its server afresh (no inertia)',
  },
  'webpp-push-2s': {
    registry: 'webpp',
    options: { pushAfterSilenceMs: 2_000 },
    description: 'the default, but A × S replaces the own estimate of any server not heard from for 2 s',
  },
  'webpp-no-steer': {
    registry: 'webpp',
    options: { pushSteerShare: 0 },
    description: 'the default, but the pushed S does not shift the own estimates on every plan (push only after 30 s of silence)',
  },
  'webpp-no-push': { registry: 'webpp', options: { pushMaxAgeMs: 0 }, description: 'sets τ_join 0.1, τ_leave 0.4 without push' },
  'webpp-weighted': {
    registry: 'webpp',
    options: { equivalentSetJoinRatio: 100, equivalentSetLeaveRatio: 100, pushMaxAgeMs: 0 },
    description: 'no thresholds: every server a member, picked with weight E_min / E; no push',
  },
};

export function herdingScenario(servers: number): Record<string, unknown> {
  const names = serverNames(servers);
  return {
    formatVersion: 1,
    name: `herding-${servers}`,
    description: `${servers} replicas, 40 ms + 5 ms per rank away from every client`,
    durationMs: 3_600_000,
    seed: 13,
    servers: Object.fromEntries(
      names.map((name, i) => [name, { link: { delayMs: { distribution: 'normal', meanMs: BASE_DELAY_MS + DELAY_STEP_MS * i, stdDevMs: 4 }, bandwidthBytesPerSec: 10_000_000 } }]),
    ),
  };
}

function serverNames(count: number): string[] {
  return Array.from({ length: count }, (_, i) => `s${String(i + 1).padStart(2, '0')}`);
}

function herdingPolicy(name: string): Policy {
  const spec = HERDING_POLICIES[name];
  if (spec === undefined) throw new RangeError(`unknown herding policy "${name}"`);
  createPolicy(spec.registry, { random: Math.random, now: () => 0 }, spec.options);
  // One engine and policy per client: the herd is many independent deciders.
  return enginePolicy({ name, description: spec.description, policy: spec.registry, ...(spec.options ? { options: spec.options } : {}), shared: false });
}

/**
 * Coefficient of variation of per-server load: in each one-second bin, the standard deviation
 * of the servers' arrivals over their mean; the mean of that over the bins after the warm-up.
 * 0: perfectly even at every moment; √(N − 1) (1.41 for 3 servers): all on one.
 */
export function loadCv(series: Readonly<Record<string, readonly number[]>>, fromBin: number, toBin: number): number {
  const rows = Object.values(series);
  let sum = 0;
  let bins = 0;
  for (let bin = fromBin; bin < toBin; bin++) {
    const loads = rows.map((row) => row[bin] ?? 0);
    const mean = loads.reduce((a, b) => a + b, 0) / loads.length;
    if (mean === 0) continue;
    const variance = loads.reduce((a, b) => a + (b - mean) ** 2, 0) / loads.length;
    sum += Math.sqrt(variance) / mean;
    bins++;
  }
  return bins === 0 ? Number.NaN : sum / bins;
}

export function runHerding(config: HerdingConfig): { row: HerdingRow; result: SimulationResult } {
  const durationMs = config.durationMs ?? 120_000;
  const thinkTimeMs = config.thinkTimeMs ?? 5_000;
  const workers = config.workers ?? 4;
  const utilisation = config.utilisation ?? 0.5;
  const warmUpMs = config.warmUpMs ?? 40_000;
  // λ ≈ clients / (think + round trip); even spread: ρ = λ·s / (N·c)  ⇒  s = ρ·N·c / λ.
  const arrivalsPerMs = config.clients / (thinkTimeMs + BASE_DELAY_MS);
  const serviceMeanMs = (utilisation * config.servers * workers) / arrivalsPerMs;
  const names = serverNames(config.servers);
  const result = simulate({
    scenario: herdingScenario(config.servers),
    policy: herdingPolicy(config.policy),
    seed: config.seed ?? 1,
    workload: { clients: config.clients, fileSizesBytes: [FILE_BYTES], durationMs, thinkTimeMs, requestTimeoutMs: 30_000 },
    queueing: {
      capacity: Object.fromEntries(names.map((name) => [name, { workers, serviceMeanMs }])),
    },
    clientStartSpreadMs: config.startSpreadMs ?? 20_000,
    keepRequests: true,
    maxEvents: 100_000_000,
  });
  const records = (result.requestRecords ?? []).filter((record) => record.startMs >= warmUpMs);
  const times = summarize(records.filter((record) => record.ok).map((record) => record.responseMs));
  const series = result.load?.series ?? {};
  const binMs = result.load?.binMs ?? 1_000;
  const row: HerdingRow = {
    clients: config.clients,
    servers: config.servers,
    policy: config.policy,
    mean_ms: round(times.meanMs),
    p95_ms: round(times.p95Ms),
    load_cv: round(loadCv(series, Math.ceil(warmUpMs / binMs), Math.floor(durationMs / binMs)), 3),
    source: 'simulator',
    requests: records.length,
    failed: records.filter((record) => !record.ok).length,
    extra_requests_pct: round(result.extraRequestsPct, 2),
    service_mean_ms: round(serviceMeanMs, 2),
    workers,
    load: series,
  };
  delete result.requestRecords;
  return { row, result };
}

function round(value: number, digits = 1): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}
