/**
 * `webpp-origin check` against real servers on loopback: a site built with `webpp-origin
 * build` served by `python3 -m http.server`, `http-server` and `serve` (the static servers a
 * first-time user reaches for; real processes), a correct `webpp-origin` cluster, and a
 * mirror with wrong bytes and a redirect to another host.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { cp, mkdir, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildStaticSite } from '../src/build/static-build.js';
import { checkDeployment, type CheckReport } from '../src/check/deployment-check.js';
import { startReplicaServer, type ReplicaServer } from '../src/server.js';
import { freePort, removeTempDirs, tempDir, waitFor } from './helpers.js';

const CLI = fileURLToPath(new URL('../src/cli.ts', import.meta.url));
const BIN = fileURLToPath(new URL('../../node_modules/.bin/', import.meta.url));
const children = new Set<ChildProcess>();
const closers: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await Promise.all(closers.map((close) => close()));
  await removeTempDirs();
});

/** The command as a process; asynchronous, so that servers of this test process keep answering it. */
function runCheck(url: string): Promise<{ status: number | null; stdout: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CLI, 'check', url], { stdio: ['ignore', 'pipe', 'inherit'], timeout: 60_000 });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.once('close', (status) => resolve({ status, stdout }));
  });
}

/** Starts a static server process and waits until it answers on its port. */
async function serveWith(command: string, args: string[], port: number): Promise<string> {
  const child = spawn(command, args, { stdio: 'ignore', env: { ...process.env, NO_UPDATE_CHECK: '1' } });
  children.add(child);
  const url = `http://127.0.0.1:${port}`;
  await waitFor(`${command} to answer on ${url}`, async () => (await fetch(`${url}/index.html`)).status > 0, { timeoutMs: 30_000, intervalMs: 100 });
  return url;
}

async function writeSite(root: string): Promise<void> {
  await mkdir(join(root, 'img'), { recursive: true });
  await writeFile(join(root, 'index.html'), '<html><head></head><body><img src="/img/a.png"><img src="/img/b.png"></body></html>');
  await writeFile(join(root, 'img', 'a.png'), 'a-png');
  await writeFile(join(root, 'img', 'b.png'), 'b-png');
}

function replica(report: CheckReport, url: string) {
  const found = report.replicas.find((entry) => entry.server === url);
  if (found === undefined) throw new Error(`no report for ${url}: ${JSON.stringify(report.replicas.map((entry) => entry.server))}`);
  return { usable: found.usable, messages: found.files.flatMap((file) => file.findings.map((finding) => `${finding.severity} ${new URL(file.physicalUrl).pathname}: ${finding.message}`)) };
}

describe('webpp-origin check against plain static servers', () => {
  let urls: { origin: string; python: string; httpServer: string; httpServerCors: string; serve: string };
  beforeAll(async () => {
    const ports = { origin: await freePort(), python: await freePort(), httpServer: await freePort(), httpServerCors: await freePort(), serve: await freePort() };
    const url = (port: number): string => `http://127.0.0.1:${port}`;
    const site = await tempDir();
    await writeSite(site);
    const directoryFile = join(await tempDir(), 'directory.json');
    const servers = [url(ports.origin), url(ports.python), url(ports.httpServer), url(ports.httpServerCors), url(ports.serve)];
    await writeFile(directoryFile, JSON.stringify({ formatVersion: 1, logicalOrigin: url(ports.origin), entries: [{ logical: '/img/*', servers }] }));
    const dist = join(await tempDir(), 'dist');
    await buildStaticSite({ inDir: site, outDir: dist, directoryFile, inject: true });
    // serve's copy lacks a file: a mirror deployed incompletely.
    const partial = join(await tempDir(), 'partial');
    await cp(dist, partial, { recursive: true });
    await rm(join(partial, 'img', 'b.png'));
    urls = {
      origin: await serveWith('python3', ['-m', 'http.server', String(ports.origin), '--bind', '127.0.0.1', '--directory', dist], ports.origin),
      python: await serveWith('python3', ['-m', 'http.server', String(ports.python), '--bind', '127.0.0.1', '--directory', dist], ports.python),
      httpServer: await serveWith(join(BIN, 'http-server'), [dist, '-p', String(ports.httpServer), '-a', '127.0.0.1', '-s'], ports.httpServer),
      httpServerCors: await serveWith(join(BIN, 'http-server'), [dist, '-p', String(ports.httpServerCors), '-a', '127.0.0.1', '-s', '--cors'], ports.httpServerCors),
      serve: await serveWith(join(BIN, 'serve'), ['-l', `tcp://127.0.0.1:${ports.serve}`, '-n', '-L', partial], ports.serve),
    };
  }, 120_000);

  it('names each mirror without CORS, the missing file, the missing Timing-Allow-Origin, and exits 1', async () => {
    const report = await checkDeployment({ pageUrl: `${urls.origin}/` });
    expect(report.bindingsFrom).toBe('static bindings file');
    expect(report.ok).toBe(false);
    // The own origin needs no CORS: python's http.server is fine there.
    expect(replica(report, urls.origin)).toEqual({ usable: true, messages: [] });
    for (const mirror of [urls.python, urls.httpServer, urls.serve]) {
      const { usable, messages } = replica(report, mirror);
      expect(usable).toBe(false);
      expect(messages.join('\n')).toMatch(/^unusable \/img\/a\.png: no Access-Control-Allow-Origin header/m);
      expect(messages.join('\n')).toMatch(/^warning \/img\/a\.png: no Timing-Allow-Origin header/m);
    }
    expect(replica(report, urls.serve).messages.join('\n')).toMatch(/^unusable \/img\/b\.png: missing file \(404\)/m);
    // http-server --cors sends Access-Control-Allow-Origin: usable, but without timing.
    const withCors = replica(report, urls.httpServerCors);
    expect(withCors.usable).toBe(true);
    expect(withCors.messages.every((message) => message.startsWith('warning') && message.includes('Timing-Allow-Origin'))).toBe(true);

    const cli = await runCheck(`${urls.origin}/`);
    expect(cli.status).toBe(1);
    expect(cli.stdout).toContain(`replica   ${urls.python}  UNUSABLE`);
    expect(cli.stdout).toContain(`replica   ${urls.httpServerCors}  usable`);
  }, 90_000);

  it("warns when the worker script is cached (http-server's default max-age)", async () => {
    const report = await checkDeployment({ pageUrl: `${urls.httpServer}/` });
    expect(report.siteFindings.map((finding) => finding.message).join('\n')).toMatch(/worker script is cached for 3600 s/);
  }, 30_000);
});

describe('webpp-origin check against webpp-origin servers', () => {
  it('a correct cluster: every replica usable, exit 0', async () => {
    const [portA, portB] = [await freePort(), await freePort()];
    const [urlA, urlB] = [`http://a.localhost:${portA}`, `http://b.localhost:${portB}`];
    const directoryFile = join(await tempDir(), 'directory.json');
    await writeFile(directoryFile, JSON.stringify({ formatVersion: 1, logicalOrigin: urlA, entries: [{ logical: '/img/*', servers: [urlA, urlB] }] }));
    const started: ReplicaServer[] = [];
    for (const [port, url] of [[portA, urlA], [portB, urlB]] as const) {
      const root = await tempDir();
      await writeSite(root);
      started.push(await startReplicaServer({ root, port, publicUrl: url, directoryFile, dataDir: await tempDir(), contentDigests: true }));
    }
    closers.push(async () => void (await Promise.all(started.map((server) => server.close()))));
    const report = await checkDeployment({ pageUrl: `${urlA}/` });
    expect(report.bindingsFrom).toBe('header');
    expect(report.replicas.map((entry) => [entry.server, entry.usable, entry.files.length])).toEqual([
      [urlA, true, 2],
      [urlB, true, 2],
    ]);
    expect(report.replicas.flatMap((entry) => entry.files.flatMap((file) => file.findings))).toEqual([]);
    expect(report.ok).toBe(true);
    const cli = await runCheck(`${urlA}/`);
    expect(cli.stdout).toContain('ok: 2 replica server(s) usable');
    expect(cli.status).toBe(0);
  }, 90_000);

  it('a mirror with other bytes (digest mismatch) and one that redirects to another host are unusable', async () => {
    const mirrorPort = await freePort();
    const mirrorUrl = `http://127.0.0.1:${mirrorPort}`;
    const mirror: Server = createServer((request, response) => {
      const cors = { 'access-control-allow-origin': '*', 'timing-allow-origin': '*' };
      if (request.url === '/img/a.png') response.writeHead(200, { ...cors, 'content-type': 'image/png' }).end('stale bytes');
      else response.writeHead(302, { ...cors, location: 'http://elsewhere.localhost:9/img/b.png' }).end();
    });
    await new Promise<void>((resolve) => mirror.listen(mirrorPort, '127.0.0.1', resolve));
    closers.push(() => new Promise((resolve) => mirror.close(() => resolve())));
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const root = await tempDir();
    await writeSite(root);
    const server = await startReplicaServer({
      root,
      port,
      publicUrl: url,
      dataDir: await tempDir(),
      contentDigests: true,
      directory: { formatVersion: 1, entries: [{ logical: '/img/*', servers: [url, mirrorUrl] }] },
    });
    closers.push(() => server.close());
    const report = await checkDeployment({ pageUrl: `${url}/` });
    const { usable, messages } = replica(report, mirrorUrl);
    expect(usable).toBe(false);
    expect(messages.join('\n')).toMatch(/^unusable \/img\/a\.png: digest mismatch/m);
    expect(messages.join('\n')).toMatch(/^unusable \/img\/b\.png: redirects to another host \(http:\/\/elsewhere\.localhost:9\/img\/b\.png\)/m);
    expect(replica(report, url)).toEqual({ usable: true, messages: [] });
  }, 60_000);
});
