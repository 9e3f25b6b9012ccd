/**
 * One policy on one generated world (@webpp/netem/model's generateWorld): the world's
 * replicas with shared links and concurrency limits, one browser (its connections per host
 * under HTTP/1.1), and the world's workload — clients sending requests one after another,
 * or loading pages whose resources all start at once and finish when the last one does.
 *
 * A client knows a resource's size only after a complete response for that exact URL (as
 * the worker learns sizes when bindings carry none), so URLs seen once are planned without
 * one. Common random numbers as in simulate(): request j of page p of client c draws the
 * same luck under every policy.
 */
import { compileScenario, createRandom, type GeneratedWorld } from '@webpp/netem/model';
import { EventQueue } from './event-queue.js';
import { SimulatedNetwork, type ExchangeCounts } from './network.js';
import type { Policy, PolicyEnvironment, RequestResult } from './policy.js';
import { ServerQueues } from './server-queue.js';
import { summarize } from './statistics.js';

export interface WorldRunResult {
  policy: string;
  /** Logical requests (one per resource of the workload). */
  requests: number;
  failed: number;
  /** Over successful requests; NaN when none succeeded. */
  meanMs: number;
  p95Ms: number;
  /** Page-shaped workloads: mean time from a page's start to its last resource; null for sequential ones. */
  pageMeanMs: number | null;
  /** Page-shaped workloads: each page's time, in the order the pages finished (empty for sequential ones). */
  pageTimesMs: number[];
  /** Exchanges beyond one per logical request (retries, hedges, probes, …), in % of requests. */
  extraRequestsPct: number;
  /** Body bytes beyond one copy of each served resource (copies, cut and cancelled bodies, failures), in % of the workload's bytes. */
  extraBytesPct: number;
  /** Times a server was marked failed. */
  markedFailed: number;
  /** Exchanges on the wire by purpose (requests, retries, hedges, refreshes, probes, …). */
  exchanges: ExchangeCounts;
  servedBy: Record<string, number>;
  virtualDurationMs: number;
}

export interface WorldRunOptions {
  /** Safety bound on simulated events. Default 5 million. */
  maxEvents?: number;
}

export function runWorld(world: GeneratedWorld, policy: Policy, options: WorldRunOptions = {}): WorldRunResult {
  const { workload, seed } = world;
  const queue = new EventQueue();
  const timelines = compileScenario(world.scenario);
  const servers = [...timelines.keys()];
  const queues = Object.keys(world.capacity).length > 0 ? new ServerQueues({ capacity: world.capacity }, (server) => createRandom(seed, 'queue', server)) : undefined;
  const network = new SimulatedNetwork({
    queue,
    servers: timelines,
    seed,
    ...(queues ? { queues } : {}),
    ...(workload.connectionsPerHost === null ? {} : { connectionsPerHost: workload.connectionsPerHost }),
  });
  let markedFailed = 0;
  const environment: PolicyEnvironment = {
    queue,
    network,
    servers,
    clients: workload.clients.length,
    seed,
    observer: { predictionError: () => undefined, markedFailed: () => void markedFailed++ },
    random: (...streamName) => createRandom(seed, 'policy', ...streamName),
    protocol: workload.http,
  };
  const run = policy.start(environment);

  const responseMs: number[] = [];
  const pageMs: number[] = [];
  const servedBy: Record<string, number> = Object.fromEntries(servers.map((server) => [server, 0]));
  const knownUrls = new Set<string>();
  let requests = 0;
  let failed = 0;
  let workloadBytes = 0;
  let servedBytes = 0;
  let activeClients = workload.clients.length;
  let lastFinishMs = 0;

  workload.clients.forEach((pages, clientIndex) => {
    const client = run.client(clientIndex);
    let index = 0;
    const loadPage = (pageIndex: number): void => {
      const page = pages[pageIndex];
      if (page === undefined) {
        activeClients--;
        lastFinishMs = Math.max(lastFinishMs, queue.now());
        return;
      }
      const pageStartMs = queue.now();
      let pending = page.length;
      page.forEach((resource, resourceIndex) => {
        requests++;
        workloadBytes += resource.sizeBytes;
        const startMs = queue.now();
        let settled = false;
        const settle = (result: RequestResult): void => {
          if (settled) return;
          settled = true;
          queue.cancel(giveUp);
          if (result.ok) {
            responseMs.push(queue.now() - startMs);
            servedBytes += resource.sizeBytes;
            knownUrls.add(resource.url);
            if (result.server !== undefined) servedBy[result.server] = (servedBy[result.server] ?? 0) + 1;
          } else {
            failed++;
          }
          if (--pending > 0) return;
          pageMs.push(queue.now() - pageStartMs);
          queue.after(workload.thinkTimeMs, () => loadPage(pageIndex + 1));
        };
        const giveUp = queue.after(workload.requestTimeoutMs, () => {
          cancel();
          settle({ ok: false, failure: 'gave-up' });
        });
        const cancel = client.request(
          { client: clientIndex, index: index++, sizeBytes: resource.sizeBytes, url: resource.url, sizeKnown: knownUrls.has(resource.url), key: `${clientIndex}|${pageIndex}|${resourceIndex}` },
          settle,
        );
      });
    };
    queue.at(0, () => loadPage(0));
  });
  const maxEvents = options.maxEvents ?? 5_000_000;
  queue.run(() => {
    if (queue.eventsRun > maxEvents) {
      throw new RangeError(`world ${seed}, ${policy.name}: simulation exceeded ${maxEvents} events at ${Math.round(queue.now())} ms (${requests} requests, exchanges ${JSON.stringify(network.counts)})`);
    }
    return activeClients === 0;
  });

  const summary = summarize(responseMs);
  const exchanges = Object.values(network.counts).reduce((sum, count) => sum + count, 0);
  return {
    policy: policy.name,
    requests,
    failed,
    meanMs: summary.meanMs,
    p95Ms: summary.p95Ms,
    pageMeanMs: workload.shape === 'page' ? summarize(pageMs).meanMs : null,
    pageTimesMs: workload.shape === 'page' ? pageMs : [],
    extraRequestsPct: requests === 0 ? 0 : ((exchanges - requests) / requests) * 100,
    extraBytesPct: workloadBytes === 0 ? 0 : (Math.max(0, network.bytesDelivered - servedBytes) / workloadBytes) * 100,
    markedFailed,
    exchanges: { ...network.counts },
    servedBy,
    virtualDurationMs: lastFinishMs,
  };
}
