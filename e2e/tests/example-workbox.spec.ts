/**
 * examples/workbox-sw: a site with its own Workbox service worker adds the webpp
 * ReplicaStrategy. Its existing route and its existing Workbox plugin keep working, its
 * images are bound to replicas, and it fails over when one replica stops.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import type { WorkerStateSnapshot } from '@webpp/sw';
import { buildWorker } from '../../examples/workbox-sw/build.mjs';
import { startSite } from '../../examples/workbox-sw/server.js';
import { startTcpForwarder, type TcpForwarder } from '../../examples/static-site/test/tcp-forwarder.js';

interface ReplicaServer {
  port: number;
  close(): Promise<void>;
}

const NAMES = ['a', 'b'] as const;
let dataDir: string;
let forwarders: TcpForwarder[] = [];
let sites: ReplicaServer[] = [];
let origins: string[] = [];

test.beforeAll(async () => {
  await buildWorker();
  dataDir = await mkdtemp(join(tmpdir(), 'webpp-workbox-'));
  forwarders = await Promise.all(NAMES.map(() => startTcpForwarder()));
  origins = NAMES.map((name, index) => `http://${name}.localhost:${forwarders[index]!.port}`);
  sites = await Promise.all(
    NAMES.map((name, index) =>
      startSite({
        publicUrl: origins[index],
        logicalOrigin: origins[0],
        servers: origins,
        peers: origins.filter((_, other) => other !== index),
        clusterSecret: 'workbox-example-cluster-secret',
        dataDir: join(dataDir, name),
      }) as Promise<ReplicaServer>,
    ),
  );
  sites.forEach((site, index) => forwarders[index]!.setTarget(site.port));
});

test.afterAll(async () => {
  await Promise.all(sites.map((site) => site.close().catch(() => undefined)));
  await Promise.all(forwarders.map((forwarder) => forwarder.close()));
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

/** Posts a message to the controlling worker and waits for the answer on a MessageChannel. */
async function askWorker<T>(page: Page, type: string): Promise<T> {
  return page.evaluate(
    (messageType) =>
      new Promise<T>((resolve, reject) => {
        const controller = navigator.serviceWorker.controller;
        if (!controller) return reject(new Error('page not controlled'));
        const channel = new MessageChannel();
        channel.port1.onmessage = (message) => resolve(message.data as T);
        controller.postMessage({ type: messageType }, [channel.port2]);
      }),
    type,
  );
}

async function platesRendered(page: Page): Promise<boolean> {
  await page.waitForFunction(() => Array.from(document.querySelectorAll<HTMLImageElement>('.plates img')).every((image) => image.complete), undefined, { timeout: 20_000 });
  return page.evaluate(() => Array.from(document.querySelectorAll<HTMLImageElement>('.plates img')).every((image) => image.naturalWidth > 0));
}

test('a Workbox worker with ReplicaStrategy binds, keeps its plugins and routes, and fails over', async ({ page }) => {
  test.setTimeout(120_000);
  await page.goto(`${origins[0]}/`);
  await page.waitForFunction(() => navigator.serviceWorker.controller !== null, undefined, { timeout: 20_000 });
  expect(await page.evaluate(() => navigator.serviceWorker.controller?.scriptURL)).toBe(`${origins[0]}/sw.js`);

  await page.reload();
  expect(await platesRendered(page)).toBe(true);
  // The site's existing NetworkFirst route still answers the API.
  await expect(page.locator('#clock')).toContainText(/Server time: \d{4}-/);

  // The strategy bound the images...
  const state = await askWorker<WorkerStateSnapshot>(page, 'webpp:state');
  const boundImages = state.decisions.filter((decision) => decision.destination === 'image' && decision.outcome === 'served');
  expect(boundImages.length).toBeGreaterThanOrEqual(3);
  // ...and every attempt to a replica went through the site's Workbox plugin.
  const fetchLog = await askWorker<{ url: string; status: number }[]>(page, 'example:fetch-log');
  for (const decision of boundImages) expect(fetchLog.map((entry) => entry.url)).toContain(decision.physicalUrl);

  // Stop the first replica: the plates come from the second.
  await sites[0]!.close();
  await page.reload();
  expect(await platesRendered(page)).toBe(true);
  const after = await askWorker<WorkerStateSnapshot>(page, 'webpp:state');
  const lastImages = after.decisions.filter((decision) => decision.destination === 'image').slice(-3);
  expect(lastImages.map((decision) => decision.servedBy)).toEqual([origins[1], origins[1], origins[1]]);
});
