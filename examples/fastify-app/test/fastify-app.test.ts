/**
 * examples/fastify-app: two real replicas of the Pantry app on loopback ports. The plugin
 * must turn the app's dynamic HTML into Web++ pages: bindings for every referenced file,
 * the page's own binding, the injected script tag, CORS on replicated files.
 */
import http, { type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { BINDINGS_HEADER, decodeBindings, type BindingsDocument } from '@webpp/core';
import { buildApp } from '../app.js';

interface Replica {
  origin: string;
  port: number;
  server: http.Server;
  app?: FastifyInstance;
}

let dataDir: string;
let replicas: Replica[] = [];

/** GET through loopback, with the *.localhost Host header the browser would send. */
function get(url: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: IncomingHttpHeaders; body: string }> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const request = http.get(
      { host: '127.0.0.1', port: target.port, path: target.pathname + target.search, headers: { host: target.host, ...headers } },
      (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (body += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body }));
      },
    );
    request.on('error', reject);
  });
}

function bindingsOf(headers: IncomingHttpHeaders): BindingsDocument {
  const decoded = decodeBindings(headers[BINDINGS_HEADER] as string | undefined);
  if (!decoded.ok) throw new Error(`bad bindings header: ${decoded.error.code} ${decoded.error.message}`);
  return decoded.document;
}

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'webpp-fastify-app-'));
  // Bind both sockets first, so that each app is built knowing every public URL.
  for (const name of ['a', 'b']) {
    const server = http.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    replicas.push({ origin: `http://${name}.localhost:${port}`, port, server });
  }
  const servers = replicas.map((replica) => replica.origin);
  const logicalOrigin = servers[0]!;
  for (const replica of replicas) {
    const app = await buildApp({
      webpp: {
        publicUrl: replica.origin,
        logicalOrigin,
        peers: servers.filter((origin) => origin !== replica.origin),
        clusterSecret: 'fastify-app-example-cluster-secret',
        dataDir: join(dataDir, new URL(replica.origin).hostname),
        directory: { formatVersion: 1, logicalOrigin, entries: ['/', '/recipes/*', '/static/*', '/api/*'].map((logical) => ({ logical, servers })) },
      },
    });
    await app.ready();
    replica.server.on('request', (request, response) => app.routing(request, response));
    replica.app = app;
  }
});

afterAll(async () => {
  for (const replica of replicas) {
    await replica.app?.close();
    replica.server.closeAllConnections();
    await new Promise<void>((resolve) => replica.server.close(() => resolve()));
  }
  replicas = [];
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe('the Pantry app with the webpp plugin', () => {
  it('binds every file a dynamic page references to both replicas, and injects the script tag', async () => {
    const [a, b] = replicas;
    const page = await get(`${a!.origin}/recipes/shakshuka`);
    expect(page.status).toBe(200);
    expect(page.body).toContain('<h1>Shakshuka</h1>');
    expect(page.body).toMatch(/<script[^>]+src="\/webpp\.js"/);

    const document = bindingsOf(page.headers);
    const resolve = (path: string): string[] | undefined => {
      const url = `${a!.origin}${path}`;
      const binding = document.bindings.find((candidate) => (candidate.prefix ? url.startsWith(candidate.logical) : candidate.logical === url));
      if (!binding) return undefined;
      const rest = binding.prefix ? url.slice(binding.logical.length) : '';
      return binding.replicas.map((replica) => replica + rest).sort();
    };
    for (const path of ['/recipes/shakshuka', '/static/style.css', '/static/img/pan.svg', '/static/img/logo.svg', '/']) {
      expect(resolve(path), path).toEqual([`${a!.origin}${path}`, `${b!.origin}${path}`].sort());
    }
  });

  it('serves the same dynamic page from the second replica, with the page bound under the logical origin', async () => {
    const [a, b] = replicas;
    const page = await get(`${b!.origin}/recipes/miso-soup`);
    expect(page.status).toBe(200);
    expect(page.body).toContain('<h1>Miso soup</h1>');
    const logicals = bindingsOf(page.headers).bindings.map((binding) => binding.logical);
    expect(logicals.some((logical) => logical.startsWith(a!.origin))).toBe(true);
  });

  it('answers an unknown recipe with 404 and a page that still works', async () => {
    const page = await get(`${replicas[0]!.origin}/recipes/no-such-dish`);
    expect(page.status).toBe(404);
    expect(page.body).toContain('No such recipe');
  });

  it('sends CORS headers on replicated files, so a page on the other origin can use them', async () => {
    const [a, b] = replicas;
    const image = await get(`${b!.origin}/static/img/pan.svg`, { origin: a!.origin });
    expect(image.status).toBe(200);
    expect(image.headers['content-type']).toContain('image/svg+xml');
    expect(image.headers['access-control-allow-origin']).toBeTruthy();
    expect(String(image.headers['access-control-expose-headers'] ?? '').toLowerCase()).toContain(BINDINGS_HEADER);
  });

  it('keeps the JSON API as it was', async () => {
    const api = await get(`${replicas[0]!.origin}/api/recipes`);
    expect(api.status).toBe(200);
    expect(JSON.parse(api.body)).toEqual(expect.arrayContaining([expect.objectContaining({ slug: 'focaccia', url: '/recipes/focaccia' })]));
  });
});
