/**
 * Three real `webpp-origin` processes for the durability run: each has its own data folder
 * and a fixed loopback port (so a restarted server keeps its public URL), all share one
 * logical origin (the first server's), list each other as peers and share a cluster
 * secret. Servers are killed with SIGKILL and restarted from their data folder; every
 * child is killed when this process exits, however it exits.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../test/helpers.js';

const ADMIN_TOKEN = 'durability-admin-token-0123456789';
const CLUSTER_SECRET = 'durability-cluster-secret-0123456789';
const START_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 15_000;
const OUTPUT_KEEP_CHARS = 64 * 1024;

/** How to run the CLI: the built one (benchmarks, after `npm run build`) or the sources through tsx (tests). */
export type CliEntry = 'dist' | 'source';

const ENTRY_ARGS: Record<CliEntry, string[]> = {
  dist: [fileURLToPath(new URL('../../dist/cli.js', import.meta.url))],
  source: ['--import', 'tsx', fileURLToPath(new URL('../../src/cli.ts', import.meta.url))],
};

export interface ServerNode {
  name: string;
  port: number;
  url: string;
  dataDir: string;
  child: ChildProcess | undefined;
  /** stdout + stderr of the current (or last) process, the last OUTPUT_KEEP_CHARS characters. */
  output: string;
  starts: number;
  /** True once the health check answered, until the process is stopped or killed. */
  up: boolean;
  /** Log lines of any start so far that report a damaged data folder. */
  damageReports: string[];
}

/** Start-up log lines that mean the data folder was damaged (directory file, replica metadata or content). */
const DAMAGE = /WEBPP_ERR_DIRECTORY_CORRUPT|ignoring unreadable metadata file|content missing or wrong size/;

const live = new Set<ChildProcess>();
let exitHookInstalled = false;

function killAllOnExit(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const child of live) child.kill('SIGKILL');
  });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      for (const child of live) child.kill('SIGKILL');
      process.exit(130);
    });
  }
}

export class DurabilityCluster {
  readonly nodes: ServerNode[] = [];

  private constructor(
    private readonly root: string,
    private readonly entry: CliEntry,
    private readonly syncIntervalMs: number,
  ) {}

  static async create(options: { entry: CliEntry; syncIntervalMs: number; names?: string[] }): Promise<DurabilityCluster> {
    killAllOnExit();
    const root = await mkdtemp(join(tmpdir(), 'webpp-durability-'));
    const site = join(root, 'site');
    await mkdir(site);
    await writeFile(join(site, 'index.html'), '<!doctype html><title>durability</title>\n');
    const cluster = new DurabilityCluster(root, options.entry, options.syncIntervalMs);
    for (const name of options.names ?? ['a', 'b', 'c']) {
      const port = await freePort();
      cluster.nodes.push({ name, port, url: `http://127.0.0.1:${port}`, dataDir: join(root, `data-${name}`), child: undefined, output: '', starts: 0, up: false, damageReports: [] });
    }
    return cluster;
  }

  get logicalOrigin(): string {
    return (this.nodes[0] as ServerNode).url;
  }

  node(name: string): ServerNode {
    const node = this.nodes.find((candidate) => candidate.name === name);
    if (node === undefined) throw new Error(`no server ${name}`);
    return node;
  }

  /**
   * Starts the server from its data folder and resolves once its health check answers 200.
   * With `markUp: false` the caller marks it up (the write loop only writes to servers marked up).
   */
  async start(node: ServerNode, { markUp = true }: { markUp?: boolean } = {}): Promise<void> {
    if (node.child !== undefined) throw new Error(`${node.name} is already running`);
    const args = [
      ...ENTRY_ARGS[this.entry],
      join(this.root, 'site'),
      '--port', String(node.port),
      '--data-dir', node.dataDir,
      '--logical-origin', this.logicalOrigin,
      '--peer', this.nodes.map((peer) => peer.url).join(','),
      '--sync-interval-ms', String(this.syncIntervalMs),
      '--no-inject',
      '--log-level', 'warn',
    ];
    const child = spawn(process.execPath, args, {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, WEBPP_ADMIN_TOKEN: ADMIN_TOKEN, WEBPP_CLUSTER_SECRET: CLUSTER_SECRET },
    });
    live.add(child);
    node.child = child;
    node.starts += 1;
    recordDamage(node);
    node.output = '';
    const keep = (chunk: Buffer): void => {
      node.output = (node.output + chunk.toString()).slice(-OUTPUT_KEEP_CHARS);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.once('exit', () => {
      live.delete(child);
      if (node.child === child) {
        node.child = undefined;
        node.up = false;
      }
    });
    const deadline = Date.now() + START_TIMEOUT_MS;
    for (;;) {
      const outcome = await Promise.race([exited.then((code) => ({ exited: code })), healthy(node.url).then((ok) => ({ ok }))]);
      if ('exited' in outcome) throw new Error(`${node.name} exited with ${outcome.exited} while starting:\n${node.output.slice(-4000)}`);
      if (outcome.ok) break;
      if (Date.now() > deadline) throw new Error(`${node.name} not healthy after ${START_TIMEOUT_MS} ms:\n${node.output.slice(-4000)}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    node.up = markUp;
  }

  /** kill -9, and wait until the process is gone. */
  async kill(node: ServerNode): Promise<void> {
    const child = node.child;
    if (child === undefined) return;
    node.up = false;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGKILL');
    await exited;
  }

  /** Clean stop (SIGTERM); resolves with the exit code (0 when the shutdown was clean). */
  async stop(node: ServerNode): Promise<number | null> {
    const child = node.child;
    if (child === undefined) return null;
    node.up = false;
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
    const code = await exited;
    clearTimeout(timer);
    return code;
  }

  async startAll(): Promise<void> {
    await Promise.all(this.nodes.map((node) => this.start(node)));
  }

  /** Damage reported by any start of any server, this one included. */
  damageReports(): string[] {
    for (const node of this.nodes) recordDamage(node);
    return this.nodes.flatMap((node) => node.damageReports.map((line) => `${node.name}: ${line}`));
  }

  /** Kills every child and removes the data folders. */
  async dispose(): Promise<void> {
    await Promise.all(this.nodes.map((node) => this.kill(node)));
    await rm(this.root, { recursive: true, force: true });
  }
}

function recordDamage(node: ServerNode): void {
  for (const line of node.output.split('\n')) {
    if (DAMAGE.test(line) && !node.damageReports.includes(line)) node.damageReports.push(line.slice(0, 500));
  }
}

async function healthy(url: string): Promise<boolean> {
  try {
    const response = await fetch(`${url}/.well-known/webpp/health`, { signal: AbortSignal.timeout(2000) });
    await response.arrayBuffer();
    return response.status === 200;
  } catch {
    return false;
  }
}

/** Admin call headers. */
export const adminHeaders = { authorization: `Bearer ${ADMIN_TOKEN}` };
