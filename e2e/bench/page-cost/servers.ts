/**
 * Three `webpp-origin` CLI processes (the README's cluster recipe: peers, a cluster secret,
 * an admin token) serving the page-cost site on loopback, with no emulator in front: the
 * browser reaches each at http://<name>.localhost:<port>, its own listening port.
 * `--no-inject`: the variants carry their own tags (site.ts).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { OriginProcess } from '../../support/cluster/origin-process.js';
import { reservePort } from '../../support/cluster/replica.js';
import { directory } from './site.js';

const NAMES = ['a', 'b', 'c'] as const;

export interface PageCostServers {
  /** Public origins, a first (the logical origin). */
  origins: string[];
  stop(): Promise<void>;
}

export async function startServers(siteRoot: string, workDir: string): Promise<PageCostServers> {
  const ports = await Promise.all(NAMES.map(() => reservePort()));
  const origins = NAMES.map((name, index) => `http://${name}.localhost:${ports[index]}`);
  const directoryFile = join(workDir, 'directory.json');
  writeFileSync(directoryFile, JSON.stringify(directory(origins), null, 2));
  const clusterSecret = randomBytes(16).toString('hex');
  const adminToken = randomBytes(16).toString('hex');
  const processes = NAMES.map((name, index) => {
    const dataDir = join(workDir, `data-${name}`);
    mkdirSync(dataDir, { recursive: true });
    return new OriginProcess({
      name,
      siteRoot,
      port: ports[index] as number,
      publicUrl: origins[index] as string,
      logicalOrigin: origins[0] as string,
      directoryFile,
      dataDir,
      peers: origins.filter((_, other) => other !== index),
      clusterSecret,
      adminToken,
      logFile: join(workDir, `origin-${name}.log`),
      extraArgs: ['--no-inject'],
    });
  });
  const stop = async (): Promise<void> => {
    await Promise.all(processes.map((server) => server.stop()));
    for (const server of processes) server.closeLog();
  };
  try {
    await Promise.all(processes.map((server) => server.start()));
  } catch (error) {
    await stop();
    throw error;
  }
  return { origins, stop };
}
