/**
 * Proxy mode in front of an application that builds absolute URLs from the request, as
 * many do: its redirects must not send browsers to the upstream's private address, and it
 * must learn the public host and scheme. Real sockets on loopback.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startReplicaServer, type ReplicaServer } from '../src/server.js';
import { removeTempDirs } from './helpers.js';

let upstream: Server;
let upstreamUrl: string;
let proxy: ReplicaServer;
let seen: IncomingHttpHeaders = {};

beforeAll(async () => {
  upstream = createServer((request, response) => {
    seen = request.headers;
    const self = `http://${request.headers.host ?? ''}`;
    if (request.url === '/old') response.writeHead(301, { location: `${self}/new?from=old#top` }).end();
    else if (request.url === '/away') response.writeHead(302, { location: 'https://example.org/elsewhere' }).end();
    else if (request.url === '/relative') response.writeHead(302, { location: '/new' }).end();
    else response.writeHead(200, { 'content-type': 'text/plain' }).end('new');
  });
  await new Promise<void>((done) => upstream.listen(0, '127.0.0.1', done));
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  proxy = await startReplicaServer({ proxyUpstream: upstreamUrl, publicHost: 'a.localhost' });
});

afterAll(async () => {
  await proxy?.close();
  await new Promise((done) => upstream?.close(done));
  await removeTempDirs();
});

/** GET as a browser on the public name sends it (fetch() cannot set Host). */
function get(path: string): Promise<{ status: number; location: string | undefined }> {
  return new Promise((resolve, reject) => {
    request({ host: '127.0.0.1', port: proxy.port, path, headers: { host: new URL(proxy.url).host } }, (response) => {
      response.resume();
      response.on('end', () => resolve({ status: response.statusCode ?? 0, location: response.headers.location }));
    }).on('error', reject).end();
  });
}

describe('proxy mode: what the upstream says about its own address', () => {
  it('points a redirect the upstream addresses to itself at this server, path, query and fragment kept', async () => {
    const response = await get('/old');
    expect(response.status).toBe(301);
    expect(response.location).toBe(`${proxy.url}/new?from=old#top`);
  });

  it('leaves redirects to other sites and relative ones as they are', async () => {
    expect((await get('/away')).location).toBe('https://example.org/elsewhere');
    expect((await get('/relative')).location).toBe('/new');
  });

  it('tells the upstream the public host, scheme and client address', async () => {
    await get('/new');
    expect(seen['x-forwarded-host']).toBe(new URL(proxy.url).host);
    expect(seen['x-forwarded-proto']).toBe('http');
    expect(seen['x-forwarded-for']).toBe('127.0.0.1');
  });
});
