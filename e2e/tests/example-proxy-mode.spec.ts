/**
 * examples/proxy-mode: `webpp-origin --proxy-upstream` in front of plain node:http servers
 * that know nothing of webpp (the paper's server-side proxy configuration). The proxy adds
 * the script tag and the bindings; the browser binds, and fails over when a replica stops.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { BINDINGS_HEADER } from '@webpp/core';
import { createLegacyServer } from '../../examples/proxy-mode/legacy-server.js';
import { startOriginCli, type CliProcess } from '../../examples/static-site/test/cli-process.js';
import { startTcpForwarder, type TcpForwarder } from '../../examples/static-site/test/tcp-forwarder.js';
import { workerStateFromController } from '../support/webpp-page.js';

const NAMES = ['a', 'b'] as const;
let dataDir: string;
let legacyServers: Server[] = [];
let forwarders: TcpForwarder[] = [];
let proxies: CliProcess[] = [];
let origins: string[] = [];

test.beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'webpp-proxy-mode-'));
  legacyServers = await Promise.all(
    NAMES.map(async () => {
      const server = createLegacyServer();
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      return server;
    }),
  );
  forwarders = await Promise.all(NAMES.map(() => startTcpForwarder()));
  origins = NAMES.map((name, index) => `http://${name}.localhost:${forwarders[index]!.port}`);
  const directoryFile = join(dataDir, 'directory.json');
  const entries = ['/', '/index.html', '/assets/*'].map((logical) => ({ logical, servers: origins }));
  await writeFile(directoryFile, JSON.stringify({ formatVersion: 1, logicalOrigin: origins[0], entries }));
  proxies = await Promise.all(
    NAMES.map((name, index) =>
      startOriginCli(
        [
          '--proxy-upstream', `http://127.0.0.1:${(legacyServers[index]!.address() as AddressInfo).port}`,
          '--port', '0',
          '--public-url', origins[index]!,
          '--logical-origin', origins[0]!,
          '--directory', directoryFile,
          '--data-dir', join(dataDir, name),
          '--peer', origins.filter((_, other) => other !== index).join(','),
        ],
        { WEBPP_CLUSTER_SECRET: 'proxy-mode-example-cluster-secret' },
      ),
    ),
  );
  proxies.forEach((proxy, index) => forwarders[index]!.setTarget(proxy.port));
});

test.afterAll(async () => {
  await Promise.all(proxies.map((proxy) => proxy.stop().catch(() => undefined)));
  await Promise.all(forwarders.map((forwarder) => forwarder.close()));
  for (const server of legacyServers) {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});


async function forecastIconsRendered(page: Page): Promise<boolean> {
  await page.waitForFunction(() => Array.from(document.querySelectorAll<HTMLImageElement>('.forecast img')).every((image) => image.complete), undefined, { timeout: 20_000 });
  return page.evaluate(() => {
    const icons = Array.from(document.querySelectorAll<HTMLImageElement>('.forecast img'));
    return icons.length === 5 && icons.every((image) => image.naturalWidth > 0);
  });
}

test('the proxy makes an unaware server a Web++ replica, and the browser fails over between two', async ({ page }) => {
  test.setTimeout(120_000);
  const response = await page.goto(`${origins[0]}/`);
  expect(response?.status()).toBe(200);
  // The upstream's HTML has no script tag and no bindings: the proxy added both.
  expect(response?.headers()[BINDINGS_HEADER]).toBeTruthy();
  expect(await response?.text()).toMatch(/<script[^>]+src="\/webpp\.js"/);
  await page.waitForFunction(() => navigator.serviceWorker.controller !== null, undefined, { timeout: 20_000 });

  await page.reload();
  await expect(page.locator('#local-time')).toBeVisible();
  expect(await forecastIconsRendered(page)).toBe(true);
  const bound = (await workerStateFromController(page)).decisions.filter((decision) => decision.outcome === 'served').map((decision) => new URL(decision.logicalUrl).pathname);
  expect(bound).toEqual(expect.arrayContaining(['/assets/weather.css', '/assets/clock.js', '/assets/sun.svg']));

  // Stop the first replica's proxy: the page and its assets come from the second.
  expect(await proxies[0]!.stop()).toBe(0);
  const stoppedAtMs = await page.evaluate(() => Date.now());
  await page.reload();
  await expect(page.locator('h1')).toHaveText('Old Town Weather');
  expect(await forecastIconsRendered(page)).toBe(true);
  const state = await workerStateFromController(page);
  const navigation = state.decisions.filter((decision) => decision.navigation).at(-1);
  expect(navigation?.servedBy).toBe(origins[1]);
  const sinceStop = state.decisions.filter((decision) => decision.atMs >= stoppedAtMs);
  expect(sinceStop.length).toBeGreaterThan(0);
  for (const decision of sinceStop) expect([decision.outcome, decision.servedBy], decision.logicalUrl).toEqual(['served', origins[1]]);
});
