/**
 * examples/static-site: three `webpp-origin` CLI processes serve the same folder; the pages
 * carry only the script tag. A visitor's browser binds every file to a replica, and keeps
 * reading the site when the server it first visited is stopped.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, test, type Page } from '@playwright/test';
import { BINDINGS_HEADER } from '@webpp/core';
import { startOriginCli, type CliProcess } from '../../examples/static-site/test/cli-process.js';
import { startTcpForwarder, type TcpForwarder } from '../../examples/static-site/test/tcp-forwarder.js';
import { workerStateFromController } from '../support/webpp-page.js';

const SITE_DIR = fileURLToPath(new URL('../../examples/static-site/site', import.meta.url));
const SERVER_NAMES = ['a', 'b', 'c'] as const;

let dataDir: string;
let forwarders: TcpForwarder[] = [];
let servers: CliProcess[] = [];
let origins: string[] = [];

test.beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'webpp-static-site-'));
  // Public ports first, so that every server can be told every public URL.
  forwarders = await Promise.all(SERVER_NAMES.map(() => startTcpForwarder()));
  origins = SERVER_NAMES.map((name, index) => `http://${name}.localhost:${forwarders[index]!.port}`);
  const directoryFile = join(dataDir, 'directory.json');
  const entries = ['/', '/index.html', '/guide/*', '/css/*', '/js/*', '/img/*'].map((logical) => ({ logical, servers: origins }));
  await writeFile(directoryFile, JSON.stringify({ formatVersion: 1, logicalOrigin: origins[0], entries }, null, 2));
  servers = await Promise.all(
    SERVER_NAMES.map((name, index) =>
      startOriginCli(
        [
          SITE_DIR,
          '--port', '0',
          '--public-url', origins[index]!,
          '--logical-origin', origins[0]!,
          '--directory', directoryFile,
          '--data-dir', join(dataDir, name),
          '--peer', origins.filter((_, other) => other !== index).join(','),
        ],
        { WEBPP_CLUSTER_SECRET: 'static-site-example-cluster-secret', WEBPP_ADMIN_TOKEN: 'static-site-example-admin-token' },
      ),
    ),
  );
  servers.forEach((server, index) => forwarders[index]!.setTarget(server.port));
});

test.afterAll(async () => {
  await Promise.all(servers.map((server) => server.stop().catch(() => undefined)));
  await Promise.all(forwarders.map((forwarder) => forwarder.close()));
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

async function brokenImages(page: Page): Promise<string[]> {
  await page.waitForFunction(() => Array.from(document.querySelectorAll<HTMLImageElement>('img[src]')).every((image) => image.complete), undefined, { timeout: 20_000 });
  return page.evaluate(() => Array.from(document.querySelectorAll<HTMLImageElement>('img[src]')).filter((image) => image.naturalWidth === 0).map((image) => image.src));
}


test('the CLI-served docs site keeps working in the browser when its first server stops', async ({ page }) => {
  test.setTimeout(120_000);
  const response = await page.goto(`${origins[0]}/guide/install.html`);
  expect(response?.status()).toBe(200);
  expect(response?.headers()[BINDINGS_HEADER]).toBeTruthy();
  await page.waitForFunction(() => navigator.serviceWorker.controller !== null, undefined, { timeout: 20_000 });

  await page.reload();
  await expect(page.locator('h1')).toHaveText('Installing Harbor');
  expect(await brokenImages(page)).toEqual([]);
  // The controlled reload learnt the page's bindings from its header and bound its four files:
  // each one the worker answered (a decision), or left to the browser because the own origin
  // was the plan's sole first choice (sw/src/direct.ts, counted in `direct`).
  const warm = await workerStateFromController(page);
  const pageFiles = ['/css/docs.css', '/js/toc.js', '/img/logo.svg', '/img/anchor.svg'];
  const bound = warm.decisions.filter((decision) => decision.outcome === 'served' && !decision.navigation).map((decision) => new URL(decision.logicalUrl).pathname);
  expect(pageFiles).toEqual(expect.arrayContaining(bound));
  expect(new Set(bound).size + (warm.counters.direct ?? 0)).toBeGreaterThanOrEqual(pageFiles.length);

  // Stop the server the user typed in the address bar: the worker binds the navigation itself.
  expect(await servers[0]!.stop()).toBe(0);
  const stoppedAtMs = await page.evaluate(() => Date.now());
  await page.goto(`${origins[0]}/guide/moorings.html`);
  await expect(page.locator('h1')).toHaveText('Moorings and berths');
  expect(await brokenImages(page)).toEqual([]);
  const state = await workerStateFromController(page);
  const navigation = state.decisions.filter((decision) => decision.navigation && decision.logicalUrl.endsWith('/guide/moorings.html')).at(-1);
  expect(navigation?.outcome).toBe('served');
  expect(navigation?.servedBy).not.toBe(origins[0]);
  // Whatever the worker tried, every bound request since the stop was delivered by b or c.
  const sinceStop = state.decisions.filter((decision) => decision.atMs >= stoppedAtMs);
  expect(sinceStop.length).toBeGreaterThan(0);
  for (const decision of sinceStop) {
    expect(decision.outcome, decision.logicalUrl).toBe('served');
    expect(origins.slice(1), decision.logicalUrl).toContain(decision.servedBy);
  }
});
