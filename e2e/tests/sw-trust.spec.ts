/**
 * The worker's trust rule (docs/protocol.md, "Trust rule") against hostile replicas built
 * from the real @webpp/origin plugin: a replica's onSend hook rewrites its webpp headers.
 *  - a replica that rebinds the site to a server nobody named: the worker never asks it;
 *  - a replica that sends `webpp-control: off`: the worker stays on and keeps binding;
 *  - the site's own origin sending `webpp-control: off` still switches the worker off, even
 *    when every page comes from a replica (the worker checks the own origin in the background).
 */
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import type { FastifyInstance } from 'fastify';
import { expect, test } from '@playwright/test';
import type { Page } from '@playwright/test';
import { BINDINGS_HEADER, CONTROL_HEADER, encodeBindings } from '@webpp/core';
import { Cluster, PIXEL_PNG } from '../support/cluster/index.js';
import { openControlled, pageRendered, waitForState, workerState } from '../support/webpp-page.js';

let root: string;
let cluster: Cluster | undefined;
let nobody: { app: FastifyInstance; origin: string; log: string[] } | undefined;

const RENDERED = { images: 4, brokenImages: 0, styled: true, scripted: true };

test.beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'webpp-trust-'));
  mkdirSync(join(root, 'img'));
  const images = [1, 2, 3, 4].map((i) => `<img src="img/${i}.png" alt="" width="1" height="1">`).join('');
  writeFileSync(
    join(root, 'index.html'),
    `<!doctype html><html><head><meta charset="utf-8"><title>trust</title>` +
      `<script src="/webpp.js" data-control-check-ms="0" async></script><link rel="stylesheet" href="/style.css"></head>` +
      `<body><h1 id="title">Gallery</h1>${images}<script src="/app.js"></script></body></html>`,
  );
  writeFileSync(join(root, 'style.css'), 'h1 { color: rgb(10, 20, 30); }');
  writeFileSync(join(root, 'app.js'), 'window.appLoaded = true;');
  for (const i of [1, 2, 3, 4]) writeFileSync(join(root, 'img', `${i}.png`), PIXEL_PNG);
});

test.afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

test.afterEach(async () => {
  await cluster?.stop();
  cluster = undefined;
  await nobody?.app.close();
  nobody = undefined;
});

/** A server no directory names, that would gladly serve the site: it logs what it is asked. */
async function startNobody(): Promise<NonNullable<typeof nobody>> {
  const app = Fastify({ logger: false, forceCloseConnections: true });
  const log: string[] = [];
  app.addHook('onRequest', async (request, reply) => {
    log.push(`${request.method} ${request.url}`);
    reply.header('access-control-allow-origin', '*');
  });
  app.get('/*', async (_request, reply) => reply.type('image/png').send(PIXEL_PNG));
  await app.listen({ port: 0, host: '127.0.0.1' });
  return { app, log, origin: `http://nobody.localhost:${(app.server.address() as AddressInfo).port}` };
}

/** Reloads until the worker has bound a page to replica `origin` (bounded). */
async function loadUntilServedBy(page: Page, origin: string): Promise<void> {
  await openControlled(page, cluster!.logicalUrl('/index.html'));
  await waitForState(page, (state) => state.decisions.some((decision) => decision.navigation && decision.servedBy === origin), {
    what: `a page served by ${origin}`,
    between: async () => void (await page.reload()),
    // An early sample inflated by a loaded machine keeps c unpreferred until its TTL (20 s).
    timeoutMs: 45_000,
  });
}

test('a replica that rebinds the site to a server nobody named: the worker never asks that server', async ({ page }) => {
  nobody = await startNobody();
  const hostileOrigin = nobody.origin;
  cluster = await Cluster.start({
    root,
    delaysMs: { a: 300, b: 200, c: 0 },
    configure: {
      // c sends the site's URLs to `nobody`, with a directory version no honest server has yet.
      c: (app) =>
        app.addHook('onSend', async (_request, reply, payload) => {
          const site = cluster!.primary.origin;
          reply.header(
            BINDINGS_HEADER,
            encodeBindings({
              directoryVersion: 1e12,
              bindings: [
                { logical: `${site}/`, prefix: true, replicas: [`${hostileOrigin}/`] },
                { logical: `${site}/img/1.png`, prefix: false, replicas: [`${hostileOrigin}/img/1.png`] },
              ],
            }).value,
          );
          return payload;
        }),
    },
  });
  const hostile = cluster.replica('c');
  await loadUntilServedBy(page, hostile.origin);
  for (let i = 0; i < 5; i++) {
    await page.reload();
    expect(await pageRendered(page)).toEqual(RENDERED);
  }
  const state = await workerState(page);
  expect(nobody.log).toEqual([]);
  expect(state.enabled).toBe(true);
  expect(state.servers.map((server) => server.server)).not.toContain(hostileOrigin);
  expect(state.counters.untrustedBindings).toBeGreaterThanOrEqual(2);
  expect(state.events).toContainEqual(
    expect.objectContaining({
      type: 'untrusted-bindings',
      server: hostile.origin,
      dropped: expect.arrayContaining([expect.objectContaining({ reason: 'unknown-server', server: hostileOrigin })]),
    }),
  );
  // Every page and resource still came from the legitimate replicas.
  expect(state.decisions.every((decision) => decision.outcome === 'served')).toBe(true);
});

test('a replica that sends `webpp-control: off`: the worker stays on and keeps binding', async ({ page }) => {
  cluster = await Cluster.start({
    root,
    delaysMs: { a: 300, b: 200, c: 0 },
    configure: {
      c: (app) =>
        app.addHook('onSend', async (_request, reply, payload) => {
          reply.header(CONTROL_HEADER, 'off');
          return payload;
        }),
    },
  });
  const hostile = cluster.replica('c');
  await loadUntilServedBy(page, hostile.origin);
  const before = await workerState(page);
  for (let i = 0; i < 3; i++) {
    await page.reload();
    expect(await pageRendered(page)).toEqual(RENDERED);
  }
  const after = await workerState(page);
  expect(after.enabled).toBe(true);
  expect(after.counters.bound).toBeGreaterThan(before.counters.bound);
  expect(await page.evaluate(async () => (await navigator.serviceWorker.getRegistration()) !== undefined)).toBe(true);
  expect(after.counters.untrustedHeaders).toBeGreaterThan(0);
  expect(after.events).toContainEqual(expect.objectContaining({ type: 'untrusted-header', header: 'webpp-control', server: hostile.origin }));
  expect(after.events.some((event) => event.type === 'control-off')).toBe(false);
});

test("the site's own origin still switches the worker off, though the pages come from a replica", async ({ page }) => {
  // While `holding`, a keeps its answers to HEADs (the worker's checks) once their headers are set.
  let holding: Promise<void> | undefined;
  let held = 0;
  cluster = await Cluster.start({
    root,
    delaysMs: { a: 300, b: 200, c: 0 },
    configure: {
      a: (app) =>
        app.addHook('onSend', async (request, _reply, payload) => {
          if (request.method === 'HEAD' && holding) {
            held++;
            await holding;
          }
          return payload;
        }),
    },
  });
  await loadUntilServedBy(page, cluster.replica('c').origin);
  // A navigation served by a replica; after it the worker asks a in the background: that check
  // is still on its way, with a's answer from before the switch, when the switch comes. (Reload
  // until one is held: on a loaded machine a may serve a navigation itself; bounded.)
  let release = (): void => undefined;
  holding = new Promise((resolve) => (release = resolve));
  await expect
    .poll(
      async () => {
        if (held > 0) return true;
        await page.reload();
        return false;
      },
      { timeout: 20_000 },
    )
    .toBe(true);
  // The origin's own kill switch (@webpp/origin `killSwitch`): only a sends the header.
  cluster.primary.killSwitch = true; // the origin's own kill switch (app.webpp.killSwitch)
  // One reload after the switch, while that check is on its way: its own check runs as soon as
  // that one ends (control-check.ts), so the switch-off reaches this first navigation after it.
  await page.reload();
  holding = undefined;
  release();
  await expect.poll(() => page.evaluate(async () => (await navigator.serviceWorker.getRegistration()) === undefined), { timeout: 20_000 }).toBe(true);
  await page.reload();
  expect(await page.evaluate(() => navigator.serviceWorker.controller)).toBeNull();
  await expect(page.locator('#title')).toHaveText('Gallery');
});
