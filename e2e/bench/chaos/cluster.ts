/**
 * The chaos bench's cluster: three `webpp-origin` processes (a, b, c) over the same site
 * folder, each behind its own @webpp/netem link emulator — the shared test cluster
 * (e2e/support/cluster) in its child-process mode. Browsers and peers reach a server only
 * through its emulator, as http://<name>.localhost:<emulator port>; the directory
 * replicates the whole site (`/*`) on all three, and a's URLs are the logical URLs. Each
 * server keeps its port (and data dir) across kills and restarts.
 */
import type { LinkEmulator, LinkProfile, RequestRecord } from '@webpp/netem';
import { Cluster } from '../../support/cluster/index.js';
import type { OriginProcess } from '../../support/cluster/origin-process.js';

export const REPLICA_NAMES = ['a', 'b', 'c'] as const;
export type ReplicaName = (typeof REPLICA_NAMES)[number];

/** The links when nothing is wrong: three distances, a little jitter, 20 MB/s each. */
export const BASE_LINKS: Record<ReplicaName, LinkProfile> = {
  a: { delayMs: { distribution: 'normal', meanMs: 20, stdDevMs: 3 }, bandwidthBytesPerSec: 20_000_000 },
  b: { delayMs: { distribution: 'normal', meanMs: 40, stdDevMs: 5 }, bandwidthBytesPerSec: 20_000_000 },
  c: { delayMs: { distribution: 'normal', meanMs: 70, stdDevMs: 8 }, bandwidthBytesPerSec: 20_000_000 },
};

interface ChaosReplica {
  name: ReplicaName;
  /** The public origin, e.g. http://b.localhost:40123. */
  origin: string;
  emulator: LinkEmulator;
  process: OriginProcess;
}

/** A request that an emulator did not carry through (reset, refused, hung, upstream error…). */
export interface LinkIncident {
  /** Wall-clock time the emulator finished with the request. */
  atEpochMs: number;
  replica: ReplicaName;
  method: string;
  url: string;
  outcome: RequestRecord['outcome'];
  status?: number;
}

export interface ChaosCluster {
  replicas: ChaosReplica[];
  /** The emulators' incidents that ended between the two wall-clock times (the latest 5 000 are kept). */
  incidents(fromEpochMs: number, toEpochMs: number): LinkIncident[];
  logicalOrigin: string;
  workDir: string;
  replica(name: ReplicaName): ChaosReplica;
  /** Stops everything; the work dir (server logs, data dirs) is removed unless `keepWorkDir`. */
  close(options?: { keepWorkDir?: boolean }): Promise<void>;
}

export async function startChaosCluster(options: { siteRoot: string; seed: string | number }): Promise<ChaosCluster> {
  const cluster = await Cluster.start({
    root: options.siteRoot,
    names: [...REPLICA_NAMES],
    links: BASE_LINKS,
    seed: options.seed,
    processes: true,
    peers: true,
  });
  const incidents: LinkIncident[] = [];
  const replicas: ChaosReplica[] = REPLICA_NAMES.map((name) => {
    const replica = cluster.replica(name);
    const emulator = replica.emulator!;
    emulator.events.on('request', (record) => {
      if (record.outcome === 'ok' && (record.status ?? 200) < 500) return;
      incidents.push({ atEpochMs: Date.now(), replica: name, method: record.method, url: record.url, outcome: record.outcome, status: record.status });
      if (incidents.length > 5_000) incidents.shift();
    });
    return { name, origin: replica.origin, emulator, process: replica.process! };
  });
  return {
    replicas,
    incidents: (fromEpochMs, toEpochMs) => incidents.filter((incident) => incident.atEpochMs >= fromEpochMs && incident.atEpochMs <= toEpochMs),
    logicalOrigin: cluster.logicalOrigin,
    workDir: cluster.workDir,
    replica: (name) => replicas.find((replica) => replica.name === name)!,
    close: (closeOptions) => cluster.stop(closeOptions),
  };
}
