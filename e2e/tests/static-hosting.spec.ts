/**
 * Static hosting mode (docs/static-hosting.md): a site built with `webpp-origin build` and
 * served by plain static file servers that know nothing of webpp: the own origin
 * (a.localhost) and two mirrors (b.localhost, c.localhost, CDN-like: CORS and
 * Timing-Allow-Origin added by the server). Two kinds of host:
 *  1. one that applies `_headers` (as Netlify and Cloudflare Pages do): pages carry
 *     `webpp-bindings`;
 *  2. one that sets no headers (GitHub Pages, plain S3): the worker reads the static
 *     bindings file instead.
 * Either way the worker binds, prefers the faster mirror, and fails over when it stops.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect, test } from '@playwright/test';
import { BINDINGS_HEADER } from '@webpp/core';
import { PIXEL_PNG } from '../support/cluster/index.js';
import { PlainStaticServer } from '../support/plain-static-server.js';
import { decisionsAfter, lastDecisionId, openControlled, pageRendered, waitForState, workerState } from '../support/webpp-page.js';

const CLI = fileURLToPath(new URL('../../origin/dist/cli.js', import.meta.url));
const STATIC_BINDINGS = '/.well-known/webpp/bindings';
const FULL_PAGE = { images: 4, brokenImages: 0, styled: true, scripted: true };
const IMAGES = ['/img/1.png', '/img/2.png', '/img/3.png', '/img/4.png'];

/** The site as its author writes it: the page script tag (with test-friendly worker options) is in the HTML. */
const SITE: Record<string, string | Buffer> = {
  'index.html':
    '<!doctype html><html><head><meta charset="utf-8"><title>static</title><link rel="stylesheet" href="/style.css">' +
    '<script src="/webpp.js" async></script></head>' +
    `<body><h1 id="title">Gallery</h1>${IMAGES.map((src) => `<img src="${src}" alt="" width="1" height="1">`).join('')}<script src="/app.js"></script></body></html>`,
  'style.css': 'h1 { color: rgb(10, 20, 30); }',
  'app.js': 'window.appLoaded = true;',
  ...Object.fromEntries(IMAGES.map((src) => [src.slice(1), PIXEL_PNG])),
};

let workDir: string;
let hosts: { a: PlainStaticServer; b: PlainStaticServer; c: PlainStaticServer };

async function startHosts(applyHeadersFile: boolean): Promise<void> {
  workDir = await mkdtemp(join(tmpdir(), 'webpp-static-hosting-'));
  hosts = {
    a: new PlainStaticServer({ host: 'a.localhost', applyHeadersFile }),
    // c is the nearer mirror; b is 150 ms away.
    b: new PlainStaticServer({ host: 'b.localhost', applyHeadersFile, cors: true, delayMs: 150 }),
    c: new PlainStaticServer({ host: 'c.localhost', applyHeadersFile, cors: true, delayMs: 0 }),
  };
  await Promise.all(Object.values(hosts).map((host) => host.start()));
  const siteDir = join(workDir, 'site');
  for (const [path, body] of Object.entries(SITE)) {
    await mkdir(join(siteDir, path, '..'), { recursive: true });
    await writeFile(join(siteDir, path), body);
  }
  const mirrors = [hosts.b.origin, hosts.c.origin];
  const directoryFile = join(workDir, 'directory.json');
  const entries = [{ logical: '/img/*', servers: mirrors }, { logical: '/style.css', servers: mirrors }, { logical: '/app.js', servers: mirrors }];
  await writeFile(directoryFile, JSON.stringify({ formatVersion: 1, logicalOrigin: hosts.a.origin, entries }));
  // As a user runs it: the CLI, on the folder.
  const outDir = join(workDir, 'out');
  await promisify(execFile)(process.execPath, [CLI, 'build', siteDir, '--out', outDir, '--directory', directoryFile]);
  for (const host of Object.values(hosts)) host.root = outDir;
}

test.afterEach(async () => {
  await Promise.all(Object.values(hosts).map((host) => host.stop()));
  await rm(workDir, { recursive: true, force: true });
});

for (const variant of [
  { name: 'a host that applies _headers (Netlify, Cloudflare Pages)', applyHeadersFile: true },
  { name: 'a host that sets no headers (GitHub Pages, S3): the static bindings file', applyHeadersFile: false },
]) {
  test(`${variant.name}: the worker binds, prefers the faster mirror and fails over`, async ({ page }) => {
    test.setTimeout(120_000);
    await startHosts(variant.applyHeadersFile);
    const { a, b, c } = hosts;

    await openControlled(page, `${a.origin}/index.html`);
    // The first visit, before the worker, loaded everything from a; from now on the worker decides.
    a.log.length = 0;
    const response = await page.reload();
    expect(response?.status()).toBe(200);
    // What the host sent with the page: the bindings header only where _headers is applied.
    expect(response?.headers()[BINDINGS_HEADER] !== undefined).toBe(variant.applyHeadersFile);
    expect(await pageRendered(page)).toEqual(FULL_PAGE);

    const state = await waitForState(page, (current) => current.servers.length === 2 && current.decisions.at(-1)?.servedBy === c.origin, {
      what: 'the nearer mirror c preferred',
      between: async () => void (await page.reload()),
    });
    const boundPaths = new Set(state.decisions.map((decision) => new URL(decision.logicalUrl).pathname));
    expect([...boundPaths].sort()).toEqual(['/app.js', ...IMAGES, '/style.css'].sort());
    expect(state.decisions.every((decision) => decision.outcome === 'served' && decision.servedBy !== a.origin)).toBe(true);
    // The mirrors served the bound files; the own origin served only the page, the scripts of webpp and (without headers) the bindings file.
    expect(a.log.filter((entry) => entry.method === 'GET' && IMAGES.includes(entry.path))).toEqual([]);
    expect(c.log.some((entry) => IMAGES.includes(entry.path) && entry.status < 400)).toBe(true);
    const bindingsFileReads = a.log.filter((entry) => entry.path === STATIC_BINDINGS);
    if (variant.applyHeadersFile) expect(bindingsFileReads).toEqual([]);
    else expect(bindingsFileReads.length).toBeGreaterThanOrEqual(1);

    // The nearer mirror goes down: every later load is complete, served by b.
    const before = lastDecisionId(await workerState(page));
    await c.stop();
    b.log.length = 0;
    for (let load = 0; load < 3; load++) {
      await page.reload();
      expect(await pageRendered(page)).toEqual(FULL_PAGE);
    }
    const after = await workerState(page);
    const decisions = decisionsAfter(after, before);
    // (A reload may take some files from the browser's memory cache: they make no decision.)
    expect(decisions.length).toBeGreaterThan(0);
    expect(b.log.some((entry) => entry.method === 'GET' && entry.status < 400)).toBe(true);
    expect(decisions.every((decision) => decision.outcome === 'served' && decision.servedBy === b.origin)).toBe(true);
    expect(decisions.some((decision) => decision.failover && decision.attempts[0]?.server === c.origin)).toBe(true);
    expect(after.servers.find((server) => server.server === c.origin)?.state).toBe('failed');
  });
}
