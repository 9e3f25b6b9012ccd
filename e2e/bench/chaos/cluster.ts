/**
 * The chaos bench's cluster: three `webpp-origin` processes (a, b, c) over the same site
 * folder, each behind its own @webpp/netem link emulator. Browsers and peers reach a server
 * only through its emulator, as http://<name>.localhost:<emulator port>; the directory
 * replicates the whole site (`/*`) on all three, and a's URLs are the logical URLs.
 *
 * The emulators start first (their ports are the public URLs); each forwards to a port
 * reserved for its server, which keeps that port across kills and restarts.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLinkEmulator, Timeline, type LinkEmulator, type LinkProfile, type RequestRecord } from '@webpp/netem';
import { OriginProcess } from './origin-process.js';

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

/** A free loopback port, for a server that must keep its port across restarts. */
async function reservePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export async function startChaosCluster(options: { siteRoot: string; seed: string | number }): Promise<ChaosCluster> {
  const workDir = mkdtempSync(join(tmpdir(), 'webpp-chaos-'));
  const timeline = new Timeline();
  const emulators: LinkEmulator[] = [];
  const replicas: ChaosReplica[] = [];
  const incidents: LinkIncident[] = [];
  const close = async (closeOptions: { keepWorkDir?: boolean } = {}): Promise<void> => {
    await Promise.all(replicas.map((replica) => replica.process.stop().catch(() => undefined)));
    for (const replica of replicas) replica.process.closeLog();
    await Promise.all(emulators.map((emulator) => emulator.close()));
    if (closeOptions.keepWorkDir !== true) rmSync(workDir, { recursive: true, force: true });
  };
  try {
    const serverPorts = await Promise.all(REPLICA_NAMES.map(() => reservePort()));
    for (const [i, name] of REPLICA_NAMES.entries()) {
      emulators.push(
        await startLinkEmulator({
          upstream: `http://127.0.0.1:${serverPorts[i]}`,
          profile: BASE_LINKS[name],
          server: name,
          seed: `${options.seed}-link-${name}`,
          timeline,
        }),
      );
    }
    for (const [i, name] of REPLICA_NAMES.entries()) {
      emulators[i]!.events.on('request', (record) => {
        if (record.outcome === 'ok' && (record.status ?? 200) < 500) return;
        incidents.push({ atEpochMs: Date.now(), replica: name, method: record.method, url: record.url, outcome: record.outcome, status: record.status });
        if (incidents.length > 5_000) incidents.shift();
      });
    }
    const origins = REPLICA_NAMES.map((name, i) => `http://${name}.localhost:${emulators[i]!.port}`);
    const logicalOrigin = origins[0]!;
    const directoryFile = join(workDir, 'directory.json');
    writeFileSync(directoryFile, JSON.stringify({ formatVersion: 1, logicalOrigin, entries: [{ logical: '/*', servers: origins }] }, null, 2));
    const clusterSecret = randomBytes(24).toString('base64url');
    const adminToken = randomBytes(24).toString('base64url');

    for (const [i, name] of REPLICA_NAMES.entries()) {
      const dataDir = join(workDir, `data-${name}`);
      mkdirSync(dataDir);
      const server = new OriginProcess({
        name,
        siteRoot: options.siteRoot,
        port: serverPorts[i]!,
        publicUrl: origins[i]!,
        logicalOrigin,
        directoryFile,
        dataDir,
        peers: origins,
        clusterSecret,
        adminToken,
        logFile: join(workDir, `origin-${name}.log`),
      });
      replicas.push({ name, origin: origins[i]!, emulator: emulators[i]!, process: server });
    }
    // All three at once, as the README's cluster recipe does.
    await Promise.all(replicas.map((replica) => replica.process.start()));
  } catch (error) {
    await close();
    throw error;
  }
  return {
    replicas,
    incidents: (fromEpochMs, toEpochMs) => incidents.filter((incident) => incident.atEpochMs >= fromEpochMs && incident.atEpochMs <= toEpochMs),
    logicalOrigin: replicas[0]!.origin,
    workDir,
    replica: (name) => replicas.find((replica) => replica.name === name)!,
    close,
  };
}
