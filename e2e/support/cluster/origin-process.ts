/**
 * One `webpp-origin` server as a child process (the CLI the README documents), so that a
 * fault can be a real `kill -9`: the process dies with whatever it had in flight, and is
 * started again on the same port with the same data dir, as a supervisor would.
 *
 * Each child leads its own process group (detached), and every live child is in a registry
 * that an exit hook kills with SIGKILL, so no server outlives the bench, even on a crash.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import { request } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';

const CLI_PATH = new URL('../../../origin/dist/cli.js', import.meta.url).pathname;
const HEALTH_PATH = '/.well-known/webpp/health';

const liveGroups = new Set<number>();
let hooksInstalled = false;

/** Kills every child's process group at once (synchronous: safe in an 'exit' hook). */
export function killAllOriginProcesses(): void {
  for (const pid of liveGroups) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  liveGroups.clear();
}

function installExitHooks(): void {
  if (hooksInstalled) return;
  hooksInstalled = true;
  process.on('exit', killAllOriginProcesses);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      killAllOriginProcesses();
      process.exit(130);
    });
  }
}

export interface OriginProcessOptions {
  name: string;
  siteRoot: string;
  /** The port the server itself listens on (its emulator forwards there). */
  port: number;
  /** What browsers and peers use: the emulator's address, e.g. http://a.localhost:40123. */
  publicUrl: string;
  logicalOrigin: string;
  directoryFile: string;
  dataDir: string;
  peers: string[];
  clusterSecret: string;
  adminToken: string;
  /** The server's own log (stdout and stderr) is appended here. */
  logFile: string;
  /** Further CLI flags (e.g. `--no-inject`). */
  extraArgs?: string[];
}

/** How a run of the process ended, when it was not by our hand. */
export interface UnexpectedExit {
  name: string;
  atMs: number;
  code: number | null;
  signal: NodeJS.Signals | null;
}

export class OriginProcess {
  readonly name: string;
  private child: ChildProcess | undefined;
  private killedByUs = false;
  private readonly log: WriteStream;
  readonly unexpectedExits: UnexpectedExit[] = [];
  starts = 0;

  constructor(private readonly options: OriginProcessOptions) {
    this.name = options.name;
    this.log = createWriteStream(options.logFile, { flags: 'a' });
    installExitHooks();
  }

  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Spawns the server and resolves once its health endpoint answers 200 (bounded). */
  async start(timeoutMs = 30_000): Promise<void> {
    if (this.running) return;
    const { options } = this;
    const args = [
      CLI_PATH,
      options.siteRoot,
      '--port', String(options.port),
      '--public-url', options.publicUrl,
      '--logical-origin', options.logicalOrigin,
      '--directory', options.directoryFile,
      '--data-dir', options.dataDir,
      ...(options.peers.length > 0 ? ['--peer', options.peers.join(',')] : []),
      '--sync-interval-ms', '2000',
      '--log-level', 'warn',
      ...(options.extraArgs ?? []),
    ];
    const child = spawn(process.execPath, args, {
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, WEBPP_CLUSTER_SECRET: options.clusterSecret, WEBPP_ADMIN_TOKEN: options.adminToken },
    });
    this.child = child;
    this.killedByUs = false;
    this.starts += 1;
    if (child.pid !== undefined) liveGroups.add(child.pid);
    this.log.write(`--- start #${this.starts} at ${new Date().toISOString()} (pid ${child.pid})\n`);
    child.stdout?.pipe(this.log, { end: false });
    child.stderr?.pipe(this.log, { end: false });
    child.once('exit', (code, signal) => {
      if (child.pid !== undefined) liveGroups.delete(child.pid);
      if (!this.killedByUs) this.unexpectedExits.push({ name: this.name, atMs: Date.now(), code, signal });
    });
    await this.waitHealthy(timeoutMs);
  }

  /** `kill -9` of the server's process group: no shutdown, no flush. */
  async kill9(): Promise<void> {
    const child = this.child;
    if (!child || !this.running || child.pid === undefined) return;
    this.killedByUs = true;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
    await exited;
  }

  /** A polite stop (SIGTERM) at the end of the bench. */
  async stop(): Promise<void> {
    const child = this.child;
    if (!child || !this.running || child.pid === undefined) return;
    this.killedByUs = true;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    process.kill(-child.pid, 'SIGTERM');
    const timedOut = await Promise.race([exited.then(() => false), sleep(5_000).then(() => true)]);
    if (timedOut) await this.kill9();
  }

  closeLog(): void {
    this.log.end();
  }

  private async waitHealthy(timeoutMs: number): Promise<void> {
    const deadlineMs = Date.now() + timeoutMs;
    while (Date.now() < deadlineMs) {
      if (!this.running) throw new Error(`origin ${this.name} exited during start-up (see ${this.options.logFile})`);
      if ((await healthStatus(this.options.port)) === 200) return;
      await sleep(50);
    }
    throw new Error(`origin ${this.name} not healthy after ${timeoutMs} ms (see ${this.options.logFile})`);
  }
}

/** GET /.well-known/webpp/health straight to the server's own port; 0 when unreachable. */
function healthStatus(port: number): Promise<number> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path: HEALTH_PATH, timeout: 1_000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(0));
    req.end();
  });
}
