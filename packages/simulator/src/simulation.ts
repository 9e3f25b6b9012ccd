/**
 * One simulated run: a scenario, a policy and a workload (paper Section 6.1: clients each
 * sending GETs one after another, cycling through the file sizes), on a virtual clock.
 */
import {
  compileScenario,
  createRandom,
  parseScenario,
  resolveWorkload,
  type Scenario,
  type WorkloadSpec,
} from '@webpp/netem/model';
import type { ClientDelay } from './client-delay.js';
import { EventQueue } from './event-queue.js';
import { SimulatedNetwork, type ExchangeCounts } from './network.js';
import { ServerQueues, type QueueingOptions } from './server-queue.js';
import type { CancelRequest, FailureReason, Policy, PolicyEnvironment, RequestResult } from './policy.js';
import { summarize, type Summary } from './statistics.js';

export interface SimulationOptions {
  /** A parsed scenario, or raw scenario JSON to validate. */
  scenario: unknown;
  policy: Policy;
  /** Default: the scenario's seed, else 0. */
  seed?: string | number;
  /** Overrides of the scenario's workload. */
  workload?: WorkloadSpec;
  /** Server time to first byte added to every exchange. Default 0. */
  serviceMs?: number;
  /** Time the client itself adds to each exchange, by scenario time (client-delay.ts). Default none. */
  clientDelay?: ClientDelay;
  /** Servers with finite capacity (server-queue.ts, issue 13); without it, servers have none. */
  queueing?: QueueingOptions;
  /** Clients start evenly spread over this many ms instead of all at 0 (many clients). Default 0. */
  clientStartSpreadMs?: number;
  /**
   * Each client learns a resource's size from its first successful response to it, and plans
   * without a size before that, as the worker does when the bindings carry no sizes (the
   * browser evaluation's do not). Default false: every request is planned with its size.
   */
  learnSizes?: boolean;
  /** Keep every request's record in the result (for analysis and tests). Default false. */
  keepRequests?: boolean;
  /** Safety bound on simulated events. Default 20 million. */
  maxEvents?: number;
}

export interface RequestRecord {
  client: number;
  index: number;
  sizeBytes: number;
  startMs: number;
  /** Response time; NaN for a failed request. */
  responseMs: number;
  ok: boolean;
  server?: string;
  failure?: FailureReason;
  /** The server with the lowest expected response time when the request was sent (see oracle). */
  bestServer?: string;
}

export interface SizeSummary extends Summary {
  sizeBytes: number;
  failed: number;
}

export interface SimulationResult {
  scenario: string;
  policy: string;
  description: string;
  seed: string | number;
  clients: number;
  /** Logical requests issued by the workload. */
  requests: number;
  succeeded: number;
  /** Requests without a complete response (every attempt failed, or the client gave up). */
  failed: number;
  /** Failed requests by reason. */
  failures: Record<FailureReason, number>;
  /** Response times of the successful requests. */
  responseTime: Summary;
  bySize: SizeSummary[];
  /** HTTP requests on the wire, by purpose. */
  exchanges: ExchangeCounts & { total: number };
  /** Requests beyond one per logical request: retries, hedges, parallel copies, refreshes, probes. */
  extraRequests: number;
  extraRequestsPct: number;
  /** Successful responses served by each server. */
  servedBy: Record<string, number>;
  /** Times a server was marked failed (timeouts and errors). */
  markedFailed: number;
  /**
   * Share of successful requests served by the server with the lowest expected response
   * time at the moment they were sent: how often the selection picked the best replica.
   */
  bestServerShare: number;
  /** Mean relative error of the latency estimate just before each sample (paper Figure 5); null without samples. */
  meanPredictionError: number | null;
  /** Virtual time when the last client finished. */
  virtualDurationMs: number;
  events: number;
  requestRecords?: RequestRecord[];
  /** With `queueing`: exchanges arriving at each server per bin of `loadBinMs` (every purpose). */
  load?: { binMs: number; series: Record<string, number[]> };
}

export function simulate(options: SimulationOptions): SimulationResult {
  const scenario = parseScenario(options.scenario);
  const workload = resolveWorkload(scenario, options.workload);
  if (!Number.isFinite(workload.durationMs) && !Number.isFinite(workload.requestsPerClient)) {
    throw new RangeError('the workload needs a durationMs or a requestsPerClient bound');
  }
  const seed = options.seed ?? scenario.seed ?? 0;
  const maxEvents = options.maxEvents ?? 20_000_000;
  const queue = new EventQueue();
  const timelines = compileScenario(scenario);
  const queues = options.queueing && new ServerQueues(options.queueing, (server) => createRandom(seed, 'queue', server));
  const network = new SimulatedNetwork({ queue, servers: timelines, seed, serviceMs: options.serviceMs ?? 0, ...(queues ? { queues } : {}), ...(options.clientDelay ? { clientDelay: options.clientDelay } : {}) });
  const servers = [...timelines.keys()];

  let predictionErrorSum = 0;
  let predictionErrorCount = 0;
  let markedFailed = 0;
  const environment: PolicyEnvironment = {
    queue,
    network,
    servers,
    clients: workload.clients,
    seed,
    observer: {
      predictionError: (error) => {
        predictionErrorSum += error;
        predictionErrorCount++;
      },
      markedFailed: () => {
        markedFailed++;
      },
    },
    random: (...streamName) => createRandom(seed, 'policy', ...streamName),
  };
  const run = options.policy.start(environment);

  const records: RequestRecord[] = [];
  let activeClients = workload.clients;
  let lastFinishMs = 0;
  const sizes = workload.fileSizesBytes;
  const knownSizes = Array.from({ length: workload.clients }, () => new Set<number>());

  const startRequest = (clientIndex: number, client: ReturnType<typeof run.client>, index: number): void => {
    const startMs = queue.now();
    if (index >= workload.requestsPerClient || startMs >= workload.durationMs) {
      activeClients--;
      lastFinishMs = Math.max(lastFinishMs, startMs);
      return;
    }
    // Clients cycle through the sizes, each from its own offset, so all sizes interleave.
    const sizeBytes = sizes[(index + clientIndex) % sizes.length]!;
    let bestServer: string | undefined;
    let bestExpectedMs = Number.POSITIVE_INFINITY;
    for (const server of servers) {
      const expectedMs = network.expectedResponseMs(server, sizeBytes);
      if (expectedMs < bestExpectedMs) [bestServer, bestExpectedMs] = [server, expectedMs];
    }
    let settled = false;
    const settle = (result: RequestResult): void => {
      if (settled) return;
      settled = true;
      queue.cancel(giveUp);
      const { ok } = result;
      const record: RequestRecord = { client: clientIndex, index, sizeBytes, startMs, responseMs: ok ? queue.now() - startMs : Number.NaN, ok };
      if (result.server !== undefined) record.server = result.server;
      if (!ok) record.failure = result.failure ?? 'no-replica';
      if (bestServer !== undefined) record.bestServer = bestServer;
      records.push(record);
      if (ok) knownSizes[clientIndex]!.add(sizeBytes);
      const pauseMs = ok ? workload.thinkTimeMs : Math.max(workload.thinkTimeMs, workload.failurePauseMs);
      queue.after(pauseMs, () => startRequest(clientIndex, client, index + 1));
    };
    const giveUp = queue.after(workload.requestTimeoutMs, () => {
      settle({ ok: false, failure: cancel?.() ?? 'gave-up' });
    });
    const known = knownSizes[clientIndex]!;
    const sizeKnown = !options.learnSizes || known.has(sizeBytes);
    const cancel: CancelRequest | undefined = client.request({ client: clientIndex, index, sizeBytes, sizeKnown, key: `${clientIndex}|${index}` }, settle);
  };

  for (let clientIndex = 0; clientIndex < workload.clients; clientIndex++) {
    const client = run.client(clientIndex);
    queue.at(((options.clientStartSpreadMs ?? 0) * clientIndex) / workload.clients, () => startRequest(clientIndex, client, 0));
  }
  queue.run(() => {
    if (queue.eventsRun > maxEvents) throw new RangeError(`simulation exceeded ${maxEvents} events`);
    return activeClients === 0;
  });

  return summarizeRun({
    scenario,
    policy: options.policy,
    seed,
    clients: workload.clients,
    records,
    network,
    servers,
    markedFailed,
    predictionError: predictionErrorCount > 0 ? predictionErrorSum / predictionErrorCount : null,
    virtualDurationMs: lastFinishMs,
    events: queue.eventsRun,
    keepRequests: options.keepRequests ?? false,
    sizes,
  });
}

interface RunFacts {
  scenario: Scenario;
  policy: Policy;
  seed: string | number;
  clients: number;
  records: RequestRecord[];
  network: SimulatedNetwork;
  servers: string[];
  markedFailed: number;
  predictionError: number | null;
  virtualDurationMs: number;
  events: number;
  keepRequests: boolean;
  sizes: number[];
}

function summarizeRun(facts: RunFacts): SimulationResult {
  const { records, network } = facts;
  const ok = records.filter((record) => record.ok);
  const counts = network.counts;
  const total = Object.values(counts).reduce((sum, count) => sum + count, 0);
  const extraRequests = total - records.length;
  const servedBy: Record<string, number> = Object.fromEntries(facts.servers.map((server) => [server, 0]));
  for (const record of ok) servedBy[record.server!] = (servedBy[record.server!] ?? 0) + 1;
  const bySize = [...new Set(facts.sizes)].map((sizeBytes) => {
    const ofSize = records.filter((record) => record.sizeBytes === sizeBytes);
    return {
      sizeBytes,
      ...summarize(ofSize.filter((record) => record.ok).map((record) => record.responseMs)),
      failed: ofSize.filter((record) => !record.ok).length,
    };
  });
  const result: SimulationResult = {
    scenario: facts.scenario.name,
    policy: facts.policy.name,
    description: facts.policy.description,
    seed: facts.seed,
    clients: facts.clients,
    requests: records.length,
    succeeded: ok.length,
    failed: records.length - ok.length,
    failures: {
      'no-replica': records.filter((record) => record.failure === 'no-replica').length,
      'cut-mid-body': records.filter((record) => record.failure === 'cut-mid-body').length,
      'gave-up': records.filter((record) => record.failure === 'gave-up').length,
    },
    responseTime: summarize(ok.map((record) => record.responseMs)),
    bySize,
    exchanges: { ...counts, total },
    extraRequests,
    extraRequestsPct: records.length === 0 ? 0 : (extraRequests / records.length) * 100,
    servedBy,
    markedFailed: facts.markedFailed,
    bestServerShare: ok.length === 0 ? 0 : ok.filter((record) => record.server === record.bestServer).length / ok.length,
    meanPredictionError: facts.predictionError,
    virtualDurationMs: facts.virtualDurationMs,
    events: facts.events,
  };
  if (facts.keepRequests) result.requestRecords = records;
  if (network.queues) result.load = { binMs: network.queues.loadBinMs, series: network.queues.loadSeries() };
  return result;
}
