/**
 * HTTPS and HTTP/2: a replica server with --tls-cert/--tls-key answers HTTP/2 and HTTP/1.1
 * clients (ALPN) with the same bindings; its start gate answers HTTP/2 requests too; the
 * certificate is reloaded on request (SIGHUP), when the files change, and not when the new
 * files are broken; peers reach each other over HTTPS with a private CA given in
 * NODE_EXTRA_CA_CERTS. Certificates come from a CA made by the test (test-ca.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { connect as h2connect, createSecureServer, type ClientHttp2Session, type IncomingHttpHeaders } from 'node:http2';
import { request as httpsRequest } from 'node:https';
import { connect as tlsConnect, createServer as createTlsServer, type PeerCertificate } from 'node:tls';
import type { AddressInfo } from 'node:net';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startReplicaServer, type ReplicaServer } from '../src/server.js';
import { StartGate } from '../src/http/start-gate.js';
import { readTlsCredentials, TlsReloader } from '../src/http/tls-credentials.js';
import { HELP, parseCli } from '../src/cli.js';
import { createTestCa, type ServerCertificate, type TestCa } from './test-ca.js';
import { ADMIN_TOKEN, CLUSTER_SECRET, auth, bindingMap, removeTempDirs, tempDir, waitFor } from './helpers.js';

/**
 * A serial number as hex without leading zero bytes: Node prints a serial whose first byte is 0
 * without it on some versions (Node 22: '82f4…' for 0x0082f4…), and a random serial starts with
 * one 1 time in 256.
 */
function bareSerial(hex: string): string {
  return hex.toLowerCase().replace(/^(?:00)+/, '');
}

const CLI = fileURLToPath(new URL('../src/cli.ts', import.meta.url));
const NAMES = ['a.localhost', 'b.localhost', 'c.localhost', '127.0.0.1'];

let ca: TestCa;
let root: string;
const servers: ReplicaServer[] = [];
const children = new Set<ChildProcess>();

beforeAll(async () => {
  ca = createTestCa();
  root = await tempDir();
  await mkdir(join(root, 'images'));
  await writeFile(join(root, 'index.html'), '<html><head></head><body><img src="/images/a.png"></body></html>');
  await writeFile(join(root, 'images', 'a.png'), 'png');
});

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  for (const server of servers) await server.close();
  await removeTempDirs();
});

async function writeCertificate(dir: string, certificate: ServerCertificate): Promise<{ certFile: string; keyFile: string }> {
  const certFile = join(dir, 'cert.pem');
  const keyFile = join(dir, 'key.pem');
  await writeFile(certFile, certificate.certPem);
  await writeFile(keyFile, certificate.keyPem);
  return { certFile, keyFile };
}

/** The certificate a fresh TLS connection to the port is given (verified against the test CA). */
function servedCertificate(port: number): Promise<PeerCertificate> {
  return new Promise((resolve, reject) => {
    const socket = tlsConnect({ host: '127.0.0.1', port, servername: 'a.localhost', ca: ca.certPem, ALPNProtocols: ['h2'] }, () => {
      const certificate = socket.getPeerCertificate();
      socket.end();
      resolve(certificate);
    });
    socket.once('error', reject);
  });
}

function h2get(session: ClientHttp2Session, path: string): Promise<{ headers: IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ':path': path, ':authority': 'a.localhost' });
    let headers: IncomingHttpHeaders = {};
    let body = '';
    stream.setEncoding('utf8');
    stream.on('response', (received) => (headers = received));
    stream.on('data', (chunk: string) => (body += chunk));
    stream.on('end', () => resolve({ headers, body }));
    stream.on('error', reject);
    stream.end();
  });
}

function h1get(port: number, path: string): Promise<{ httpVersion: string; alpn: string | false; headers: IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const outgoing = httpsRequest({ host: '127.0.0.1', port, path, servername: 'a.localhost', ca: ca.certPem, agent: false }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () =>
        resolve({ httpVersion: response.httpVersion, alpn: (response.socket as unknown as { alpnProtocol: string | false }).alpnProtocol, headers: response.headers, body }),
      );
    });
    outgoing.on('error', reject);
    outgoing.end();
  });
}

async function startTlsServer(files: { certFile: string; keyFile: string }, watchIntervalMs = 0): Promise<ReplicaServer> {
  const server = await startReplicaServer({
    root,
    publicHost: 'a.localhost',
    tls: { ...files, watchIntervalMs },
    dataDir: await tempDir(),
    directory: { formatVersion: 1, entries: [{ logical: '/images/*', servers: ['https://b.localhost:8443', 'https://c.localhost:8443'] }] },
  });
  servers.push(server);
  return server;
}

describe('HTTPS with HTTP/2 and HTTP/1.1', () => {
  it('serves pages with their bindings over h2 and over HTTP/1.1 on one port', async () => {
    const server = await startTlsServer(await writeCertificate(await tempDir(), ca.issue(NAMES)));
    expect(server.url).toMatch(/^https:\/\/a\.localhost:\d+$/);

    const session = h2connect(`https://127.0.0.1:${server.port}`, { ca: ca.certPem, servername: 'a.localhost' });
    try {
      const page = await h2get(session, '/');
      expect(session.alpnProtocol).toBe('h2');
      expect(page.headers[':status']).toBe(200);
      expect(page.body).toContain('/webpp.js');
      expect(bindingMap(page.headers['webpp-bindings'])).toEqual({ [`${server.url}/images/*`]: ['https://b.localhost:8443/images/', 'https://c.localhost:8443/images/'] });
      const image = await h2get(session, '/images/a.png');
      expect(image.headers[':status']).toBe(200);
      expect(image.body).toBe('png');
    } finally {
      session.close();
    }

    const page = await h1get(server.port, '/');
    expect(page.httpVersion).toBe('1.1');
    expect(page.alpn).not.toBe('h2');
    expect(bindingMap(page.headers['webpp-bindings'])).toEqual({ [`${server.url}/images/*`]: ['https://b.localhost:8443/images/', 'https://c.localhost:8443/images/'] });
  });

  it('refuses to start with a key that does not belong to the certificate', async () => {
    const dir = await tempDir();
    const files = await writeCertificate(dir, ca.issue(NAMES));
    await writeFile(files.keyFile, ca.issue(NAMES).keyPem);
    await expect(startReplicaServer({ root, tls: files, dataDir: await tempDir() })).rejects.toMatchObject({ code: 'WEBPP_ERR_TLS_CREDENTIALS' });
  });

  it('refuses a watchIntervalMs that a timer cannot keep (it would read the files every millisecond)', async () => {
    const files = await writeCertificate(await tempDir(), ca.issue(NAMES));
    // Node's timers take at most 2^31 - 1 ms and run anything else (Infinity, NaN, 2^31) every 1 ms.
    for (const watchIntervalMs of [Infinity, Number.NaN, 2 ** 31, -1]) {
      await expect(startReplicaServer({ root, tls: { ...files, watchIntervalMs }, dataDir: await tempDir() }), String(watchIntervalMs)).rejects.toMatchObject({
        code: 'WEBPP_ERR_BAD_OPTIONS',
      });
    }
  });
});

describe('the start gate on an HTTP/2 server', () => {
  it('answers 503 with Retry-After to h2 requests until opened, then the app', async () => {
    const certificate = ca.issue(NAMES);
    const gate = new StartGate();
    const server = createSecureServer({ cert: certificate.certPem, key: certificate.keyPem, allowHTTP1: true }, gate.handler);
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    const port = (server.address() as { port: number }).port;
    const session = h2connect(`https://127.0.0.1:${port}`, { ca: ca.certPem, servername: 'a.localhost' });
    try {
      const starting = await h2get(session, '/');
      expect(starting.headers[':status']).toBe(503);
      expect(starting.headers['retry-after']).toBe('1');
      expect(JSON.parse(starting.body)).toMatchObject({ code: 'WEBPP_ERR_STARTING' });
      gate.setHandler((_request, response) => response.end('ready'));
      gate.open({ error: () => undefined });
      // The same session carries on: the 503 closed a stream, not the connection.
      const ready = await h2get(session, '/');
      expect(ready.headers[':status']).toBe(200);
      expect(ready.body).toBe('ready');
      expect((await h1get(port, '/')).body).toBe('ready');
    } finally {
      session.close();
      server.close();
    }
  });
});

describe('certificate reload', () => {
  it('serves the new certificate after reloadTls(), keeps the old one when the new files are broken', async () => {
    const dir = await tempDir();
    const first = ca.issue(NAMES);
    const files = await writeCertificate(dir, first);
    const server = await startTlsServer(files);
    expect(bareSerial((await servedCertificate(server.port)).serialNumber)).toBe(bareSerial(first.serialHex));

    const second = ca.issue(NAMES);
    await writeCertificate(dir, second);
    expect(server.reloadTls?.()).toBe(true);
    expect(bareSerial((await servedCertificate(server.port)).serialNumber)).toBe(bareSerial(second.serialHex));

    await writeFile(files.keyFile, 'not a key');
    expect(server.reloadTls?.()).toBe(false);
    await writeFile(files.keyFile, ca.issue(NAMES).keyPem); // a key of another certificate
    expect(server.reloadTls?.()).toBe(false);
    expect(bareSerial((await servedCertificate(server.port)).serialNumber)).toBe(bareSerial(second.serialHex));
  });

  it('reloads by itself when the files change', async () => {
    const dir = await tempDir();
    const files = await writeCertificate(dir, ca.issue(NAMES));
    const server = await startTlsServer(files, 50);
    const renewed = ca.issue(NAMES);
    await writeCertificate(dir, renewed);
    await waitFor('the renewed certificate', async () => bareSerial((await servedCertificate(server.port)).serialNumber) === bareSerial(renewed.serialHex), { timeoutMs: 10_000, intervalMs: 100 });
  });

  it('picks up files renewed between the start and the first check, and reports a broken pair once', async () => {
    const dir = await tempDir();
    const first = ca.issue(NAMES);
    const files = await writeCertificate(dir, first);
    const started = readTlsCredentials(files);
    const server = createTlsServer({ ...started, ALPNProtocols: ['h2'] }, (socket) => socket.end());
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    const port = (server.address() as AddressInfo).port;
    const logs: string[] = [];
    const log = { info: (_object: object, message: string) => logs.push(message), error: (_object: object, message: string) => logs.push(message) };
    const reloader = new TlsReloader(server, { ...files, watchIntervalMs: 20 }, log, started);
    try {
      // Renewed after the server read its files, before it began to watch them.
      const renewed = ca.issue(NAMES);
      await writeCertificate(dir, renewed);
      reloader.watch();
      await waitFor('the renewed certificate', async () => bareSerial((await servedCertificate(port)).serialNumber) === bareSerial(renewed.serialHex), { timeoutMs: 10_000, intervalMs: 50 });
      expect(logs).toEqual(['TLS certificate reloaded']);

      // A key of another certificate: kept the renewed one, said so once over many checks.
      await writeFile(files.keyFile, ca.issue(NAMES).keyPem);
      await waitFor('the failed reload', () => logs.length === 2, { timeoutMs: 10_000, intervalMs: 20 });
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(logs).toEqual(['TLS certificate reloaded', 'TLS reload failed: keeping the previous certificate']);
      expect(bareSerial((await servedCertificate(port)).serialNumber)).toBe(bareSerial(renewed.serialHex));
    } finally {
      reloader.close();
      server.close();
    }
  });
});

describe('webpp-origin over HTTPS', () => {
  it('takes --tls-cert and --tls-key together, and documents them', () => {
    expect(parseCli(['site', '--tls-cert', 'c.pem', '--tls-key', 'k.pem'])).toMatchObject({ options: { tls: { certFile: 'c.pem', keyFile: 'k.pem' } } });
    expect(() => parseCli(['site', '--tls-cert', 'c.pem'])).toThrow(/together/);
    for (const text of ['--tls-cert', '--tls-key', 'SIGHUP', 'NODE_EXTRA_CA_CERTS']) expect(HELP).toContain(text);
  });

  function startCli(args: string[], env: Record<string, string>): { child: ChildProcess; logs: string[] } {
    const child = spawn(process.execPath, ['--import', 'tsx', CLI, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(child);
    const logs: string[] = [];
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => logs.push(...chunk.split('\n').filter((line) => line !== '')));
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => logs.push(chunk));
    return { child, logs };
  }

  it('reloads on SIGHUP and syncs with an HTTPS peer whose CA is in NODE_EXTRA_CA_CERTS', async () => {
    const peerDir = await tempDir();
    const peer = await startReplicaServer({
      root,
      publicHost: 'b.localhost',
      tls: { ...(await writeCertificate(peerDir, ca.issue(NAMES))), watchIntervalMs: 0 },
      dataDir: await tempDir(),
      clusterSecret: CLUSTER_SECRET,
      injectScript: false,
    });
    servers.push(peer);
    const caFile = join(await tempDir(), 'ca.pem');
    await writeFile(caFile, ca.certPem);
    const dir = await tempDir();
    const files = await writeCertificate(dir, ca.issue(NAMES));
    const { child, logs } = startCli(
      [root, '--port', '0', '--public-host', 'a.localhost', '--tls-cert', files.certFile, '--tls-key', files.keyFile, '--data-dir', await tempDir(), '--peer', peer.url, '--sync-interval-ms', '200'],
      { NODE_EXTRA_CA_CERTS: caFile, WEBPP_ADMIN_TOKEN: ADMIN_TOKEN, WEBPP_CLUSTER_SECRET: CLUSTER_SECRET },
    );
    const listening = await waitFor('the listening log line', () => logs.map((line) => JSON.parse(line) as { msg?: string; url?: string }).find((line) => line.msg === 'webpp-origin listening'));
    expect(listening.url).toMatch(/^https:\/\/a\.localhost:\d+$/);
    const port = Number(new URL(listening.url as string).port);

    // A replica created on the CLI server reaches its HTTPS peer's directory.
    const created = await new Promise<number>((resolve, reject) => {
      const outgoing = httpsRequest(
        { host: '127.0.0.1', port, method: 'POST', path: '/.well-known/webpp/replicas/images/new.png', servername: 'a.localhost', ca: ca.certPem, headers: { ...auth, 'content-type': 'image/png' } },
        (response) => resolve(response.statusCode ?? 0),
      );
      outgoing.on('error', reject);
      outgoing.end('new');
    });
    expect(created).toBe(201);
    await waitFor('the peer to learn the new replica over HTTPS', async () => {
      const session = h2connect(`https://127.0.0.1:${peer.port}`, { ca: ca.certPem, servername: 'b.localhost' });
      try {
        return (await h2get(session, '/.well-known/webpp/directory')).body.includes('/images/new.png');
      } finally {
        session.close();
      }
    });

    const renewed = ca.issue(NAMES);
    await writeCertificate(dir, renewed);
    child.kill('SIGHUP');
    await waitFor('the SIGHUP reload', () => logs.some((line) => line.includes('TLS certificate reloaded') && line.includes('SIGHUP')));
    expect(bareSerial((await servedCertificate(port)).serialNumber)).toBe(bareSerial(renewed.serialHex));
    child.kill('SIGTERM');
  });
});
