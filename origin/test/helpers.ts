/** Shared helpers of the origin tests: temporary folders and bounded polling. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { startReplicaServer, type ReplicaServer, type ReplicaServerOptions } from '../src/server.js';

export const ADMIN_TOKEN = 'test-admin-token-0123456789';
export const CLUSTER_SECRET = 'test-cluster-secret-0123456789';

const made: string[] = [];

export async function tempDir(prefix = 'webpp-origin-test-'): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}

export async function removeTempDirs(): Promise<void> {
  await Promise.all(made.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
}

/**
 * Polls `probe` until it returns a value other than undefined/false, at most `timeoutMs`.
 * Throws with `what` and the last observed value when the condition never holds.
 */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  { timeoutMs = 15_000, intervalMs = 25 }: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
      last = value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last value: ${String(last)}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

export const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };

import Fastify, { type FastifyInstance } from 'fastify';
import fastifyStatic from '@fastify/static';
import { decodeBindings, type BindingsDocument } from '@webpp/core';
import { webppOrigin } from '../src/plugin.js';
import type { WebppOriginOptions } from '../src/options.js';
import { WEBPP_INTERNALS } from '../src/options/internals.js';

export const ORIGIN_A = 'http://a.localhost:8081';
export const ORIGIN_B = 'http://b.localhost:8082';
export const ORIGIN_C = 'http://c.localhost:8083';

/** A Fastify app with the plugin (publicUrl = ORIGIN_A unless given), optional static root and extra routes. */
export async function buildApp(
  options: Partial<WebppOriginOptions> = {},
  extra: { root?: string; routes?: (app: FastifyInstance) => void } = {},
): Promise<FastifyInstance> {
  const app = Fastify({ logger: false });
  await app.register(webppOrigin, { publicUrl: ORIGIN_A, adminToken: ADMIN_TOKEN, ...options });
  extra.routes?.(app);
  if (extra.root !== undefined) await app.register(fastifyStatic, { root: extra.root });
  await app.ready();
  return app;
}

/** Decodes a bindings header, failing the test on malformed input. */
export function bindingsOf(header: string | string[] | number | undefined): BindingsDocument | undefined {
  if (header === undefined) return undefined;
  const result = decodeBindings(String(header));
  if (!result.ok) throw new Error(`bad bindings header: ${result.error.code} ${result.error.message}`);
  return result.document;
}

/** logical URL -> replicas, from a bindings header. */
export function bindingMap(header: string | string[] | number | undefined): Record<string, string[]> {
  const document = bindingsOf(header);
  return Object.fromEntries((document?.bindings ?? []).map((binding) => [`${binding.logical}${binding.prefix ? '*' : ''}`, binding.replicas]));
}

/** A TCP port free on 127.0.0.1 right now (for a child server that must keep its port across restarts). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

/**
 * `count` replica servers on loopback ports that are each other's peers, with sync and pings
 * a minute apart (so that only an announcement brings a pushed value in a test's time).
 * `optionsFor(index)` adds each server's own options (its root at least). Returns their URLs
 * and the servers, which the caller closes.
 */
export async function startQuietPeers(
  count: number,
  optionsFor: (index: number) => ReplicaServerOptions | Promise<ReplicaServerOptions>,
): Promise<{ urls: string[]; servers: ReplicaServer[] }> {
  const ports: number[] = [];
  for (let index = 0; index < count; index += 1) ports.push(await freePort());
  const urls = ports.map((port) => `http://127.0.0.1:${port}`);
  const servers: ReplicaServer[] = [];
  for (const [index, port] of ports.entries()) {
    servers.push(
      await startReplicaServer({
        port,
        adminToken: ADMIN_TOKEN,
        clusterSecret: CLUSTER_SECRET,
        peers: urls.filter((_, other) => other !== index),
        syncIntervalMs: 60_000,
        peerPingIntervalMs: 60_000,
        injectScript: false,
        ...(await optionsFor(index)),
      }),
    );
  }
  return { urls, servers };
}

/** The three servers of a home-and-co-ops test cluster; a is the home (the logical origin). */
export const TRIO = ['a', 'b', 'c'] as const;
export type TrioName = (typeof TRIO)[number];

/** Free loopback ports for a, b and c, and their public URLs `http://<name>.localhost:<port>`. */
export async function trioAddresses(): Promise<{ ports: Record<TrioName, number>; urls: Record<TrioName, string> }> {
  const ports = {} as Record<TrioName, number>;
  const urls = {} as Record<TrioName, string>;
  for (const name of TRIO) {
    ports[name] = await freePort();
    urls[name] = `http://${name}.localhost:${ports[name]}`;
  }
  return { ports, urls };
}

/** What each server of a trio is: its port and URL, a's logical origin, the credentials, the other two as peers. */
export function trioMember(name: TrioName, ports: Record<TrioName, number>, urls: Record<TrioName, string>): ReplicaServerOptions {
  return {
    port: ports[name],
    publicUrl: urls[name],
    logicalOrigin: urls.a,
    adminToken: ADMIN_TOKEN,
    clusterSecret: CLUSTER_SECRET,
    peers: TRIO.filter((other) => other !== name).map((other) => urls[other]),
  };
}

/** Load-driven replication at test speed: decisions every 150 ms, 50 hits make a resource hot, peers pinged every 100 ms. */
export const FAST_REPLICATION = {
  syncIntervalMs: 200,
  peerTimeoutMs: 1000,
  peerPingIntervalMs: 100,
  injectScript: false,
  autoReplicate: true,
  replicationIntervalMs: 150,
  replicationCoopIntervalMs: 60_000,
  replicationHitThreshold: 50,
  replicationMinLoad: 0.5,
  [WEBPP_INTERNALS]: { replicationPeerMaxAgeMs: 2000 },
} satisfies ReplicaServerOptions;
