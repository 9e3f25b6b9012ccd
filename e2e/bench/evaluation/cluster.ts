/**
 * The emulated wide-area deployment of one bench scenario: three @webpp/origin replica
 * servers (Fastify + the webppOrigin plugin + @fastify/static), every file fully replicated
 * through one prefix binding, each behind its own @webpp/netem link emulator on an ephemeral
 * loopback port, reached by the browser as <name>.localhost:<emulator port>.
 *
 * The replicas' sockets are bound first and the emulators started in front of them, so each
 * replica's public URL (and so the bindings it sends) is its emulator's address.
 *
 * Every request the emulators see is counted per policy: the bench tags each page request
 * with `?p=<policy>&c=<client>`, the worker carries the query over to the physical
 * URL, and refreshes and probes reuse physical URLs the worker has seen.
 */
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import Fastify from 'fastify';
import type { FastifyInstance } from 'fastify';
import fastifyStatic from '@fastify/static';
import { webppOrigin } from '@webpp/origin';
import { startScenarioEmulators, responseTiming } from '@webpp/netem';
import { writeFreecdnManifest, writeFreecdnScripts } from './freecdn.js';
import type { RequestPlan, RequestRecord, Scenario, ScenarioEmulators } from '@webpp/netem';

/** One request as an emulator saw it, for the calibration of the simulator. */
export interface ServerSideRequest {
  server: string;
  method: string;
  client: number;
  /** The file's size, from its path (/files/<size>.bin). */
  sizeBytes: number;
  /** The Range header, when it had one (a resume, or a refresh that measures throughput). */
  range: string | undefined;
  /** Scenario time of arrival. */
  arrivedAtMs: number;
  outcome: RequestRecord['outcome'];
  plan: RequestPlan | null;
  bodyBytes: number;
  /** Arrival to last byte out, as the emulator measured it. */
  completeMs: number | undefined;
}

/**
 * Per policy tag: requests by server and method, and the tagged GETs of each client in the
 * order they arrived (requests of one client are sequential, so a page request's GETs come
 * before the next one's, background GETs aside).
 */
export interface PolicyTraffic {
  requests: number;
  /**
   * GETs with a Range header from a byte past 0: body resumes. (The bench page never sends
   * Range; a refresh that measures throughput asks for bytes=0-….)
   */
  resumeRequests: number;
  byServer: Record<string, number>;
  byMethod: Record<string, number>;
  gets: Map<number, ServerSideRequest[]>;
}

export interface BenchCluster {
  scenario: Scenario;
  /** By scenario server name (A, B, C): the public origin, e.g. http://a.localhost:40123. */
  origins: Record<string, string>;
  /** The logical origin: the first server's (the primary copy's URL is the logical URL). */
  logicalOrigin: string;
  emulators: ScenarioEmulators;
  /** Scenario time 0 is now. */
  restart(): void;
  /** What the emulators saw, per policy tag. */
  traffic(tag: string): PolicyTraffic;
  /** Requests that carried no policy tag (page loads, scripts, setup). */
  untaggedRequests(): number;
  close(): Promise<void>;
}

export interface BenchClusterOptions {
  scenario: Scenario;
  /** The paper's workload: one file per size, /files/<size>.bin. */
  fileSizesBytes?: readonly number[];
  /** A generated site (issue 22): /files<url> for each resource URL (a `?v=` query is a file of its own). */
  resources?: readonly { url: string; sizeBytes: number }[];
}

/** The bench site: an empty page, the files, and freecdn's scripts, in a temporary folder. */
function writeSite(options: BenchClusterOptions): string {
  const root = mkdtempSync(join(tmpdir(), 'webpp-eval-site-'));
  mkdirSync(join(root, 'files'));
  writeFileSync(
    join(root, 'bench.html'),
    '<!doctype html><html><head><meta charset="utf-8"><title>webpp evaluation</title></head><body><h1>webpp evaluation</h1></body></html>',
  );
  // Random bytes: incompressible, so every byte crosses the emulated link.
  for (const size of options.fileSizesBytes ?? []) writeFileSync(join(root, 'files', `${size}.bin`), randomBytes(size));
  const written = new Set<string>();
  for (const { url, sizeBytes } of options.resources ?? []) {
    const file = join(root, 'files', sitePath(url));
    if (written.has(file)) continue;
    written.add(file);
    mkdirSync(join(file, '..'), { recursive: true });
    writeFileSync(file, randomBytes(sizeBytes));
  }
  writeFreecdnScripts(root);
  return root;
}

/** A generated resource's file in the site: its path, with a version query as a suffix (`/js/r3.js?v=42` → `js/r3.js.v42`). */
function sitePath(url: string): string {
  const [path, query = ''] = url.split('?') as [string, string?];
  const version = new URLSearchParams(query).get('v');
  return `${path.replace(/^\/+/, '')}${version === null ? '' : `.v${version}`}`;
}

/** Fastify's rewriteUrl: a request for /files/<path>?v=<n>… reads the file of that version. */
function versionedUrl(url: string): string {
  const match = /^(\/files\/[^?]*)\?(.*)$/.exec(url);
  if (!match) return url;
  const version = new URLSearchParams(match[2]).get('v');
  return version === null ? url : `${match[1]}.v${version}?${match[2]}`;
}

function listen(server: Server): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
  });
}

function emptyTraffic(): PolicyTraffic {
  return { requests: 0, resumeRequests: 0, byServer: {}, byMethod: {}, gets: new Map() };
}

export async function startBenchCluster(options: BenchClusterOptions): Promise<BenchCluster> {
  const { scenario } = options;
  const names = Object.keys(scenario.servers);
  const root = writeSite(options);
  const servers = names.map(() => createServer());
  const apps: FastifyInstance[] = [];
  let emulators: ScenarioEmulators | undefined;

  const close = async (): Promise<void> => {
    await emulators?.close();
    await Promise.all(apps.map((app) => app.close().catch(() => undefined)));
    for (const server of servers) {
      server.closeAllConnections();
      if (server.listening) await new Promise<void>((done) => server.close(() => done()));
    }
    rmSync(root, { recursive: true, force: true });
  };

  const byTag = new Map<string, PolicyTraffic>();
  let untagged = 0;
  try {
    const ports = await Promise.all(servers.map(listen));
    const upstreams = Object.fromEntries(names.map((name, i) => [name, `http://127.0.0.1:${ports[i]}`]));
    emulators = await startScenarioEmulators({ scenario, upstreams });
    // Every link is forced up while the browser contexts are set up: with the scenario
    // compressed, an outage can fall due before the workload starts (outage's first one
    // comes at 12 s, recovery's at 3 s) and would refuse the bench page itself. restart()
    // hands the links back to the schedule, from scenario time 0.
    for (const emulator of Object.values(emulators.emulators)) emulator.setOutage(null);
    const origins = Object.fromEntries(names.map((name) => [name, `http://${name.toLowerCase()}.localhost:${emulators!.emulators[name]!.port}`]));
    const logicalOrigin = origins[names[0]!]!;
    // Full replication: one prefix binding, in the scenario's server order (A, B, C).
    const directory = { formatVersion: 1 as const, logicalOrigin, entries: [{ logical: '/*', servers: names.map((name) => origins[name]!) }] };
    writeFreecdnManifest(root, names.map((name) => origins[name]!));

    for (const [i, name] of names.entries()) {
      const server = servers[i]!;
      const app = Fastify({
        logger: false,
        rewriteUrl: (request) => versionedUrl(request.url ?? '/'),
        serverFactory: (handler: (request: IncomingMessage, response: ServerResponse) => void) => {
          server.on('request', handler);
          return server;
        },
      }) as unknown as FastifyInstance;
      apps.push(app);
      // The bench page registers the worker itself, with the policy under test.
      await app.register(webppOrigin, { publicUrl: origins[name]!, logicalOrigin, directory, injectScript: false });
      // The files are never stored by the browser: every page request says no-store, and
      // freecdn's worker, which drops the page's cache mode, must not be answered from the
      // HTTP cache either (no validators, no-store).
      await app.register(fastifyStatic, {
        root,
        index: ['index.html'],
        cacheControl: false,
        etag: false,
        lastModified: false,
        setHeaders: (reply, path) => {
          if (path.startsWith(join(root, 'files'))) reply.header('cache-control', 'no-store');
        },
      });
      await app.ready();
    }

    for (const name of names) {
      emulators.emulators[name]!.events.on('request', (record) => {
        const url = new URL(record.url, 'http://x');
        const tag = url.searchParams.get('p');
        if (tag === null) {
          untagged++;
          return;
        }
        let traffic = byTag.get(tag);
        if (!traffic) byTag.set(tag, (traffic = emptyTraffic()));
        traffic.requests++;
        if (record.method === 'GET' && record.range !== undefined && !/^bytes=0-/.test(record.range)) traffic.resumeRequests++;
        traffic.byServer[name] = (traffic.byServer[name] ?? 0) + 1;
        traffic.byMethod[record.method] = (traffic.byMethod[record.method] ?? 0) + 1;
        if (record.method === 'GET') {
          const client = Number(url.searchParams.get('c'));
          const entry: ServerSideRequest = {
            server: name,
            method: record.method,
            client,
            sizeBytes: Number(/\/files\/(\d+)\.bin$/.exec(url.pathname)?.[1] ?? Number.NaN),
            range: record.range,
            arrivedAtMs: record.arrivedAtMs,
            outcome: record.outcome,
            plan: record.plan,
            bodyBytes: record.bodyBytes,
            completeMs: record.completeMs,
          };
          const key = client;
          const list = traffic.gets.get(key);
          if (list) list.push(entry);
          else traffic.gets.set(key, [entry]);
        }
      });
    }

    return {
      scenario,
      origins,
      logicalOrigin,
      emulators,
      restart: () => {
        // Time 0 first, then the schedule: no outage flickers in from the setup's timeline.
        emulators!.restart();
        for (const emulator of Object.values(emulators!.emulators)) emulator.clearOverrides();
      },
      traffic: (tag) => byTag.get(tag) ?? emptyTraffic(),
      untaggedRequests: () => untagged,
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/** The link's idealised time for a response (delay + stalls + size ÷ bandwidth), without any server or client time. */
export function emulatedMs(plan: RequestPlan, bodyBytes: number): number {
  return responseTiming(plan, bodyBytes, 0).completeMs;
}
