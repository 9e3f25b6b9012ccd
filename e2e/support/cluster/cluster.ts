/**
 * A cluster of real @webpp/origin replica servers for e2e tests, benchmarks and the demo
 * (issue 12, section 4): N servers on loopback ephemeral ports, each behind its own
 * @webpp/netem link emulator (replica.ts), reached as http://<name>.localhost:<port>.
 *
 *   const cluster = await Cluster.start({ site: demoSite(4), delaysMs: { a: 150, b: 0, c: 150 } });
 *   cluster.replica('b').stall();            // a hung server (netem outage "hang")
 *   await cluster.replica('b').kill();       // a dead one; start() brings it back
 *   cluster.replica('b').requests('/img/1.png', 'GET');
 *
 * The site is either `site` (a map of files, written to a folder per replica, so a replica
 * may hold only some paths and bodies may name the replica) or `root` (one folder served
 * by all). The replication directory is real: a seed with one prefix entry for the whole
 * site on every server, exact entries per path when `holds` says who holds what, or the
 * test's own `entries`. The logical URL of a resource is its URL on the first replica.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { Timeline, parseScenario, type Scenario } from '@webpp/netem';
import type { ClusterOptions, DirectoryEntrySeed } from './options.js';
import { ClusterReplica } from './replica.js';
import { pageScriptTag, writeSiteFolder, type Site } from './site.js';
import { siteRoutes } from './site-routes.js';

const SITE_SUFFIX = 'site';

export class Cluster {
  readonly replicas: ClusterReplica[];
  /** Scenario clock shared by the emulators (restart() puts scenario time 0 at now). */
  readonly timeline = new Timeline();
  readonly scenario: Scenario | undefined;
  /** Management API token (and cluster secret with `peers`). */
  readonly adminToken = randomBytes(16).toString('hex');
  readonly clusterSecret = randomBytes(16).toString('hex');
  /** Site folders, data dirs, the directory file and process logs; removed on stop() unless kept. */
  readonly workDir = mkdtempSync(join(tmpdir(), 'webpp-cluster-'));
  private params: Record<string, string | number>;
  private killSwitchOn = false;

  private constructor(private readonly options: ClusterOptions) {
    if ((options.site === undefined) === (options.root === undefined)) throw new Error('give exactly one of `site` and `root`');
    this.scenario = options.scenario === undefined ? undefined : parseScenario(options.scenario);
    const names = options.names ?? (this.scenario ? Object.keys(this.scenario.servers) : ['a', 'b', 'c']);
    this.params = options.workerParams ?? {};
    const scenario = this.scenario;
    this.replicas = names.map(
      (name) =>
        new ClusterReplica(name, {
          timeline: this.timeline,
          delayMs: options.delaysMs?.[name] ?? 0,
          ...(options.links?.[name] ? { profile: options.links[name] } : {}),
          ...(options.seed === undefined ? {} : { seed: `${options.seed}-link-${name}` }),
          ...(options.processes ? { childProcess: true } : {}),
          ...(scenario ? { scenario: { scenario, server: name } } : {}),
          ...(options.tls ? { tls: options.tls } : {}),
          ...(options.tcpLink ? { tcp: true } : {}),
          ...(options.distinctClientAddresses ? { distinctClientAddresses: true } : {}),
        }),
    );
  }

  static async start(options: ClusterOptions): Promise<Cluster> {
    const cluster = new Cluster(options);
    try {
      await cluster.startAll();
    } catch (error) {
      await cluster.stop();
      throw error;
    }
    return cluster;
  }

  get primary(): ClusterReplica {
    return this.replicas[0] as ClusterReplica;
  }

  get logicalOrigin(): string {
    return this.primary.origin;
  }

  /** Public origins by replica name. */
  get origins(): Record<string, string> {
    return Object.fromEntries(this.replicas.map((replica) => [replica.name, replica.origin]));
  }

  replica(name: string): ClusterReplica {
    const replica = this.replicas.find((candidate) => candidate.name === name);
    if (!replica) throw new Error(`no replica named ${name}`);
    return replica;
  }

  /** The replica with a public origin ("http://b.localhost:1234"). */
  byOrigin(origin: string): ClusterReplica | undefined {
    return this.replicas.find((replica) => replica.origin === origin);
  }

  logicalUrl(path: string): string {
    return `${this.logicalOrigin}${path}`;
  }

  /** Kills one replica by name (see ClusterReplica.kill). */
  async kill(name: string): Promise<void> {
    await this.replica(name).kill();
  }

  /** The site's files as the test gave them (with `site`). */
  get site(): Site {
    return this.options.site ?? {};
  }

  /** Worker options on the page script tag; setting them rewrites the pages on every replica. */
  get workerParams(): Record<string, string | number> {
    return this.params;
  }

  set workerParams(params: Record<string, string | number>) {
    this.params = params;
    this.writeSites();
  }

  /** The origin's kill switch on every replica: `webpp-control: off` on every response. */
  set killSwitch(on: boolean) {
    this.killSwitchOn = on;
    for (const replica of this.replicas) replica.killSwitch = on;
  }

  get killSwitch(): boolean {
    return this.killSwitchOn;
  }

  /**
   * Replaces the bindings header every replica sends (undefined from the function: none);
   * undefined restores the origin's own. A broken or hostile deployment, after the plugin.
   */
  set bindingsOverride(override: ((path: string, replica: string) => string | undefined) | undefined) {
    for (const replica of this.replicas) {
      replica.faults.rewriteHeaders =
        override === undefined
          ? undefined
          : (request, reply) => {
              const value = override(request.url.split('?')[0] ?? '/', replica.name);
              if (value === undefined) reply.removeHeader('webpp-bindings');
              else reply.header('webpp-bindings', value);
            };
    }
  }

  /**
   * Stores a replica through the origin's management API on the named replicas (default
   * all): the origin then serves it from its replica store, with its own strong
   * `"sha256-…"` ETag, Range and conditional requests.
   */
  async storeReplica(path: string, content: Buffer | string, contentType: string, names?: string[]): Promise<void> {
    for (const replica of names?.map((name) => this.replica(name)) ?? this.replicas) {
      const response = await fetch(`${replica.origin.replace(replica.host, '127.0.0.1')}/.well-known/webpp/replicas${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${this.adminToken}`, 'content-type': contentType },
        body: typeof content === 'string' ? content : new Uint8Array(content),
      });
      if (response.status !== 201) throw new Error(`storing ${path} on ${replica.name}: ${response.status} ${await response.text()}`);
    }
  }

  /** Scenario time 0 is now (every emulator's schedule restarts). */
  restartTimeline(): void {
    this.timeline.restart();
  }

  async stop(options: { keepWorkDir?: boolean } = {}): Promise<void> {
    await Promise.all(this.replicas.map((replica) => replica.stop()));
    if (options.keepWorkDir !== true) rmSync(this.workDir, { recursive: true, force: true });
  }

  private siteFolder(replica: ClusterReplica): string {
    return this.options.root ?? join(this.workDir, replica.name, SITE_SUFFIX);
  }

  private holds(replica: ClusterReplica, path: string): boolean {
    const held = this.options.holds?.[replica.name];
    return held === undefined || held.includes(path);
  }

  private writeSites(): void {
    const site = this.options.site;
    if (!site) return;
    const tag = this.options.pageScript ?? pageScriptTag(this.params);
    for (const replica of this.replicas) writeSiteFolder(this.siteFolder(replica), site, replica.name, (path) => this.holds(replica, path), tag);
  }

  private directoryEntries(): DirectoryEntrySeed[] {
    const origins = this.origins;
    if (this.options.entries) return this.options.entries(origins);
    const all = this.replicas.map((replica) => replica.origin);
    const site = this.options.site;
    if (!site || this.options.holds === undefined) return [{ logical: '/*', servers: all }];
    const entries: DirectoryEntrySeed[] = [];
    for (const path of Object.keys(site)) {
      const servers = this.replicas.filter((replica) => this.holds(replica, path)).map((replica) => replica.origin);
      if (servers.length > 0) entries.push({ logical: path, servers });
      if (path === '/index.html' && servers.length > 0) entries.push({ logical: '/', physical: servers.map((origin) => `${origin}/`) });
    }
    return entries;
  }

  /** Content-Type and Cache-Control of a site file, as the site declares them. */
  private fileHeaders(root: string, absolutePath: string): Record<string, string> {
    const path = `/${relative(root, absolutePath).split(sep).join('/')}`;
    const file = this.options.site?.[path];
    if (!file) return {};
    return { 'content-type': file.contentType, 'cache-control': file.cacheControl ?? 'no-store' };
  }

  private async startAll(): Promise<void> {
    for (const replica of this.replicas) await replica.bind();
    this.writeSites();
    const directory = { formatVersion: 1 as const, logicalOrigin: this.logicalOrigin, entries: this.directoryEntries() };
    const origins = this.replicas.map((replica) => replica.origin);
    const directoryFile = join(this.workDir, 'directory.json');
    if (this.options.processes) writeFileSync(directoryFile, JSON.stringify(directory, null, 2));
    const starts: Promise<void>[] = [];
    for (const replica of this.replicas) {
      const root = this.siteFolder(replica);
      const dataDir = join(this.workDir, replica.name, 'data');
      const peers = this.options.peers ? origins.filter((origin) => origin !== replica.origin) : [];
      if (this.options.processes) {
        mkdirSync(dataDir, { recursive: true });
        const process = {
          siteRoot: root,
          logicalOrigin: this.logicalOrigin,
          directoryFile,
          dataDir,
          peers,
          clusterSecret: this.clusterSecret,
          adminToken: this.adminToken,
          logFile: join(this.workDir, `origin-${replica.name}.log`),
        };
        // All at once, as the README's cluster recipe starts them (peers sync from the start).
        starts.push(replica.start({ root, dataDir, origin: {}, process }));
        continue;
      }
      await replica.start({
        root,
        dataDir,
        origin: {
          contentDigests: false,
          ...this.options.origin,
          logicalOrigin: this.logicalOrigin,
          directory,
          adminToken: this.adminToken,
          ...(peers.length > 0 ? { peers, clusterSecret: this.clusterSecret } : {}),
        },
        ...(this.options.site ? { fileHeaders: (path: string) => this.fileHeaders(root, path) } : {}),
        ...(this.options.site ? { routes: (app: FastifyInstance) => siteRoutes(app, this.site, replica.name) } : {}),
        configure: (app) => {
          this.options.configure?.[replica.name]?.(app);
          this.options.afterPlugin?.(app, replica.name);
        },
      });
    }
    await Promise.all(starts);
  }
}

