/**
 * The herding bench's servers (issue 13 §5): three real @webpp/origin replicas that are
 * peers (they exchange their pushed service times), each behind its own netem link at a
 * different distance, each with a finite capacity: at most `workers` requests in service at
 * once (the origin's `maxConcurrentRequests`, a FIFO queue in front), and every image
 * request costs `workMs` of service (emulated work inside the server, after the queue). A
 * server thus serves at most workers / workMs requests per second; beyond that its queue,
 * and the service time it pushes, grow — the M/D/c queue of the simulator's model.
 */
import type { FastifyInstance } from 'fastify';
import { Cluster, demoSite } from '../../support/cluster/index.js';

export interface CapacityClusterOptions {
  /** Round-trip delay of each replica's link (ms), by name; the names are the replicas. */
  delaysMs: Record<string, number>;
  workers: number;
  workMs: number;
}

/** Only content the clients load costs work; the page, the scripts and peer calls do not. */
const WORK_PREFIX = '/img/';

export function startCapacityCluster(options: CapacityClusterOptions): Promise<Cluster> {
  const names = Object.keys(options.delaysMs);
  const work = (app: FastifyInstance): void => {
    app.addHook('onRequest', async (request) => {
      if (request.url.startsWith(WORK_PREFIX)) await new Promise((resolve) => setTimeout(resolve, options.workMs));
    });
  };
  return Cluster.start({
    site: demoSite(4),
    names,
    delaysMs: options.delaysMs,
    peers: true,
    origin: { maxConcurrentRequests: options.workers, maxQueuedRequests: 10_000, syncIntervalMs: 2_000 },
    configure: Object.fromEntries(names.map((name) => [name, work])),
  });
}

/** Requests for images each replica received, per bin of `binMs` from `startMs` (GET and HEAD: every exchange is load). */
export function arrivalsPerBin(cluster: Cluster, startMs: number, endMs: number, binMs: number): Record<string, number[]> {
  const bins = Math.ceil((endMs - startMs) / binMs);
  const series: Record<string, number[]> = {};
  for (const replica of cluster.replicas) {
    const counts = new Array<number>(bins).fill(0);
    for (const entry of replica.log) {
      if (!entry.url.startsWith(WORK_PREFIX) || entry.atMs < startMs || entry.atMs >= endMs) continue;
      const bin = Math.floor((entry.atMs - startMs) / binMs);
      counts[bin] = (counts[bin] ?? 0) + 1;
    }
    series[replica.name] = counts;
  }
  return series;
}
