/**
 * The demo cluster: three replica servers of the gallery site on loopback, each behind an
 * emulated link, plus the control endpoint for the dashboard's buttons.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Timeline } from '@webpp/netem';
import type { ReplicaView } from '../dashboard/model.js';
import { startControlServer, type ControlServer, type ReplicaAction } from './control-server.js';
import { bundleDashboard, SITE_DIR } from './dashboard-bundle.js';
import { DemoReplica } from './demo-replica.js';
import { DEFAULT_REPLICA_LINKS, type ReplicaLinkSpec } from './link-profiles.js';
import { createSiteApp, type SiteLogLevel } from './site-app.js';

export const DEFAULT_REPLICA_PORTS = [8081, 8082, 8083] as const;
export const DEFAULT_CONTROL_PORT = 8080;

export interface DemoOptions {
  /** Public port of each replica, in order a, b, c; 0 = ephemeral. Default 8081, 8082, 8083. */
  replicaPorts?: readonly number[];
  /** Port of the control endpoint; 0 = ephemeral. Default 8080. */
  controlPort?: number;
  /** Replica ids and their links. Default: near, far, jittery. */
  links?: readonly ReplicaLinkSpec[];
  /** The site to replicate. Default examples/demo/site. */
  siteDir?: string;
  /** Where replicas keep their directories and replica content; default a fresh temp dir, removed on close. */
  dataDir?: string;
  /** Bearer token of the replicas' management API; default a random one per run. */
  adminToken?: string;
  logLevel?: SiteLogLevel;
}

export interface RunningDemo {
  /** The gallery on the first replica, e.g. http://a.localhost:8081/. */
  readonly galleryUrl: string;
  /** The dashboard, with the control endpoint and token in the fragment. */
  readonly dashboardUrl: string;
  readonly control: ControlServer;
  /** Bearer token of the replicas' management API (POST, PUT, DELETE). */
  readonly adminToken: string;
  readonly replicas: readonly DemoReplica[];
  /** Stops every server and removes the temporary data. Idempotent. */
  close(): Promise<void>;
}

export async function startDemo(options: DemoOptions = {}): Promise<RunningDemo> {
  const links = options.links ?? DEFAULT_REPLICA_LINKS;
  const ports = options.replicaPorts ?? DEFAULT_REPLICA_PORTS;
  if (ports.length !== links.length) throw new RangeError(`need ${links.length} replica ports, got ${ports.length}`);
  const siteDir = options.siteDir ?? SITE_DIR;
  const ownsDataDir = options.dataDir === undefined;
  const dataDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), 'webpp-demo-')));

  await bundleDashboard();
  const adminToken = options.adminToken ?? randomBytes(18).toString('base64url');
  const clusterSecret = randomBytes(24).toString('base64url');

  const timeline = new Timeline();
  const replicas: DemoReplica[] = [];
  let control: ControlServer | undefined;
  const close = async (): Promise<void> => {
    await control?.close();
    await Promise.all(replicas.map((replica) => replica.close()));
    if (ownsDataDir) await rm(dataDir, { recursive: true, force: true });
  };

  try {
    for (const [index, spec] of links.entries()) {
      replicas.push(await DemoReplica.listen({ spec, publicPort: ports[index] ?? 0, timeline }));
    }
    const clusterOrigins = replicas.map((replica) => replica.publicOrigin);
    const primaryOrigin = clusterOrigins[0]!;
    for (const replica of replicas) {
      await replica.start((self) =>
        createSiteApp({
          siteDir,
          dataDir: join(dataDir, self.id),
          selfOrigin: self.publicOrigin,
          logicalOrigin: primaryOrigin,
          clusterOrigins,
          adminToken,
          clusterSecret,
          logLevel: options.logLevel ?? 'warn',
        }),
      );
    }

    control = await startControlServer(
      {
        replicas: (): ReplicaView[] => replicas.map((replica) => replica.view()),
        allowedOrigins: () => clusterOrigins,
        act: async (id: string, action: ReplicaAction): Promise<ReplicaView> => {
          const replica = replicas.find((candidate) => candidate.id === id);
          if (!replica) throw new Error(`no replica ${id}`);
          if (action === 'stop') await replica.stop();
          else if (action === 'start') await replica.start();
          else replica.setSlowed(action === 'slow');
          return replica.view();
        },
      },
      { port: options.controlPort ?? DEFAULT_CONTROL_PORT },
    );

    const fragment = new URLSearchParams({ control: control.url, token: control.token });
    return {
      galleryUrl: `${primaryOrigin}/`,
      dashboardUrl: `${primaryOrigin}/dashboard.html#${fragment.toString()}`,
      control,
      adminToken,
      replicas,
      close: once(close),
    };
  } catch (error) {
    await close().catch(() => undefined);
    throw error;
  }
}

function once(work: () => Promise<void>): () => Promise<void> {
  let running: Promise<void> | undefined;
  return () => (running ??= work());
}
