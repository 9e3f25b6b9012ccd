/**
 * Server push end to end (issue 13): three real origins that exchange their pushed service
 * times (peers), one of them loaded. A fresh visitor's worker talks only to the site's own
 * origin, learns the loaded replica's service time from that origin's `webpp-load` header
 * without ever contacting the loaded replica, and binds its first image request to the other
 * replica although the origin lists the loaded one first, without asking the loaded one at all; the
 * loaded replica's utilisation (`util`, the busy share of its last measurement interval) reaches the
 * worker's state with it. With push switched off on the origins, the same first request knows
 * nothing to choose by: it follows the origin's order to the loaded replica, raced against the
 * others (engine v3's cold-start race, core plan.ts), so the loaded replica is asked.
 */
import { expect, test } from '@playwright/test';
import type { FastifyInstance } from 'fastify';
import { LOAD_HEADER, parseLoadHeader } from '@webpp/core';
import { Cluster, demoSite } from '../support/cluster/index.js';
import { openControlled, waitForState, type WorkerStateSnapshot } from '../support/webpp-page.js';

/** Every request to the loaded replica costs this much service (emulated work inside the server). */
const LOADED_SERVICE_MS = 400;

async function startCluster(pushServiceTime: boolean): Promise<Cluster> {
  return Cluster.start({
    site: demoSite(4),
    peers: true,
    // I = 250 ms: b's utilisation is measured per interval, and b re-pushes (with it) within T/R = 5 intervals of its first value.
    // The servers share this process's event loop, so their utilisation is their slots' share: each gets a limit.
    origin: { pushServiceTime, syncIntervalMs: 1_000, serviceTimeIntervalMs: 250, maxConcurrentRequests: 64 },
    // The images live on b and c; the origin lists them in URL order, so the loaded replica
    // b comes first and a cold start would pick it.
    entries: (origins) => [
      { logical: '/img/*', servers: [origins['b'] ?? '', origins['c'] ?? ''] },
      { logical: '/*', servers: [origins['a'] ?? '', origins['b'] ?? '', origins['c'] ?? ''] },
    ],
    configure: {
      b: (app: FastifyInstance) => {
        app.addHook('onRequest', async (request) => {
          if (!request.url.startsWith('/.well-known/')) await new Promise((resolve) => setTimeout(resolve, LOADED_SERVICE_MS));
        });
      },
    },
  });
}

/** A replica's URL as Node's fetch reaches it (it does not resolve *.localhost). */
function fromNode(cluster: Cluster, name: string, path: string): string {
  const replica = cluster.replica(name);
  return `${replica.origin.replace(replica.host, '127.0.0.1')}${path}`;
}

/** b and c get some load from elsewhere (not the browser), then a's responses name both pushed values. */
async function loadB(cluster: Cluster, expectForwarded: boolean): Promise<void> {
  const b = cluster.replica('b');
  const c = cluster.replica('c');
  await Promise.all([1, 2, 3].map(() => fetch(fromNode(cluster, 'b', '/whoami.txt')).then((response) => response.text())));
  await fetch(fromNode(cluster, 'c', '/whoami.txt')).then((response) => response.text());
  if (!expectForwarded) return;
  const deadline = Date.now() + 15_000;
  for (;;) {
    const response = await fetch(fromNode(cluster, 'a', '/whoami.txt'));
    await response.text();
    const loads = parseLoadHeader(response.headers.get(LOAD_HEADER));
    const fromB = loads.find((load) => load.server === b.origin);
    if (fromB !== undefined && fromB.serviceMs >= LOADED_SERVICE_MS * 0.9 && fromB.utilisation !== undefined && loads.some((load) => load.server === c.origin)) return;
    if (Date.now() > deadline) throw new Error(`a never forwarded b's load: ${response.headers.get(LOAD_HEADER)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** The first bound image request of a fresh visitor, after the worker learned the bindings from the own origin only. */
async function firstImageServer(
  cluster: Cluster,
  page: import('@playwright/test').Page,
): Promise<{ servedBy: string | undefined; asked: string[]; bLogBefore: number; pushedBefore: WorkerStateSnapshot['pushed'] }> {
  await openControlled(page, cluster.logicalUrl('/page2.html'));
  // An observed same-origin fetch of the gallery page: the own origin's answer teaches the
  // images' bindings (c listed first) and carries its webpp-load.
  const learned = await waitForState(page, (state) => state.bindings.count > 0, {
    what: 'bindings learned',
    between: async () => void (await page.evaluate(() => fetch('/index.html', { cache: 'no-store' }).then((r) => r.text()))),
  });
  const bLogBefore = cluster.replica('b').log.filter((entry) => !entry.url.startsWith('/.well-known/')).length;
  await page.evaluate((url) => fetch(url).then((response) => response.arrayBuffer()), cluster.logicalUrl('/img/1.png'));
  const state = await waitForState(page, (snapshot) => snapshot.decisions.some((decision) => decision.logicalUrl.endsWith('/img/1.png')), { what: 'image bound' });
  const decision = state.decisions.find((record) => record.logicalUrl.endsWith('/img/1.png'));
  return { servedBy: decision?.servedBy, asked: decision?.attempts.map((attempt) => attempt.server) ?? [], bLogBefore, pushedBefore: learned.pushed };
}

test('a fresh worker learns a loaded replica\'s pushed service time from another origin and binds around it', async ({ page }) => {
  const cluster = await startCluster(true);
  try {
    await loadB(cluster, true);
    const b = cluster.replica('b');
    const requestsToBBefore = b.log.filter((entry) => !entry.url.startsWith('/.well-known/')).length;
    const { servedBy, asked, bLogBefore, pushedBefore } = await firstImageServer(cluster, page);
    // Before the image request, the browser had not contacted b at all…
    expect(bLogBefore).toBe(requestsToBBefore);
    // …yet the worker knew b's load, relayed by the own origin…
    const learned = pushedBefore.find((view) => view.server === b.origin);
    expect(learned?.via).toBe('webpp-load');
    expect(learned?.serviceMs).toBeGreaterThanOrEqual(LOADED_SERVICE_MS * 0.9);
    // …with its utilisation, a share in [0, 1] (b's work is a timer: its event loop stays idle)…
    expect(learned?.utilisation).toBeGreaterThanOrEqual(0);
    expect(learned?.utilisation).toBeLessThanOrEqual(1);
    // …and bound the first image to c although the origin lists b first, without asking b.
    expect(servedBy, JSON.stringify(pushedBefore)).toBe(cluster.replica('c').origin);
    expect(asked[0]).toBe(cluster.replica('c').origin);
    expect(asked).not.toContain(b.origin);
  } finally {
    await cluster.stop();
  }
});

test('without push, the same fresh worker follows the origin\'s order to the loaded replica', async ({ page }) => {
  const cluster = await startCluster(false);
  try {
    await loadB(cluster, false);
    const { asked, pushedBefore } = await firstImageServer(cluster, page);
    expect(pushedBefore).toEqual([]);
    // Nothing tells b is loaded: the plan starts with b, the origin's first, and b is asked
    // (the cold-start race also asks c at once; whichever answers first serves the image).
    expect(asked[0]).toBe(cluster.replica('b').origin);
  } finally {
    await cluster.stop();
  }
});
