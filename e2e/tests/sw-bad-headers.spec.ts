/**
 * The worker fails open on malformed webpp headers from a replica (built from the real
 * @webpp/origin plugin, its onSend hook rewriting what it sends): a bindings header that
 * does not decode, a `webpp-load` header of garbage and hostile origins, and Server-Timing
 * values that are negative, huge, zero or not numbers, or carry a utilisation outside [0, 1].
 * Every page still renders, every request is served, the worker stays on, and no garbage
 * server enters its tables.
 */
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { BINDINGS_HEADER, LOAD_HEADER } from '@webpp/core';
import { Cluster, PIXEL_PNG } from '../support/cluster/index.js';
import { openControlled, pageRendered, waitForState, workerState } from '../support/webpp-page.js';

let root: string;
let cluster: Cluster | undefined;

const RENDERED = { images: 4, brokenImages: 0, styled: true, scripted: true };
const GARBAGE_SERVER = 'http://garbage.localhost:9';

test.beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'webpp-bad-headers-'));
  mkdirSync(join(root, 'img'));
  const images = [1, 2, 3, 4].map((i) => `<img src="img/${i}.png" alt="" width="1" height="1">`).join('');
  writeFileSync(
    join(root, 'index.html'),
    `<!doctype html><html><head><meta charset="utf-8"><title>bad headers</title>` +
      `<script src="/webpp.js" async></script><link rel="stylesheet" href="/style.css"></head>` +
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
});

/** The values a broken or hostile replica sends, one per response in turn. */
const BAD_SERVER_TIMINGS = [
  'webpp;dur=-5',
  'webpp;dur=1e400',
  'webpp;dur=0',
  'webpp;dur=abc',
  'webpp;dur=NaN, webpp;dur=3',
  `webpp;dur=${'9'.repeat(400)}`,
  'webpp;dur=4;util=-0.5',
  'webpp;dur=4;util=1.5',
  'webpp;dur=4;util=Infinity',
  `webpp;dur=4;util=${'9'.repeat(400)}`,
];
const BAD_LOADS = [
  `"${GARBAGE_SERVER}";dur=1;age=0`,
  '"javascript:alert(1)";dur=1',
  '"__proto__";dur=1',
  `${'"http://x.localhost:1";dur=-1;age=-1,'.repeat(500)}`,
  ';;;,,,"',
];

test('a replica that sends malformed bindings, webpp-load and Server-Timing headers: the worker fails open', async ({ page }) => {
  let turn = 0;
  cluster = await Cluster.start({
    root,
    delaysMs: { a: 200, b: 150, c: 0 },
    configure: {
      // c is the nearest replica, so the worker soon prefers it; its every answer is broken.
      c: (app) =>
        app.addHook('onSend', async (_request, reply, payload) => {
          turn += 1;
          reply.header(BINDINGS_HEADER, turn % 2 === 0 ? '1.z.999.!!!not-base64!!!' : '9.q.zzz');
          reply.header(LOAD_HEADER, BAD_LOADS[turn % BAD_LOADS.length]);
          reply.header('server-timing', BAD_SERVER_TIMINGS[turn % BAD_SERVER_TIMINGS.length]);
          return payload;
        }),
    },
  });
  const broken = cluster.replica('c');
  await openControlled(page, cluster.logicalUrl('/index.html'));
  await waitForState(page, (state) => state.decisions.some((decision) => decision.servedBy === broken.origin), {
    what: `a request served by ${broken.origin}`,
    between: async () => void (await page.reload()),
    timeoutMs: 45_000,
  });
  for (let i = 0; i < 6; i++) {
    await page.reload();
    expect(await pageRendered(page)).toEqual(RENDERED);
  }
  const state = await workerState(page);
  expect(state.enabled).toBe(true);
  expect(state.decisions.every((decision) => decision.outcome === 'served')).toBe(true);
  const known = [...state.servers.map((server) => server.server), ...state.pushed.map((view) => view.server)];
  expect(known).not.toContain(GARBAGE_SERVER);
  expect(known.some((server) => !server.startsWith('http://'))).toBe(false);
  // A malformed utilisation is dropped, never kept as a share outside [0, 1] for the policy to weigh by.
  expect(state.pushed.filter((view) => view.utilisation !== undefined && !(view.utilisation >= 0 && view.utilisation <= 1))).toEqual([]);
  expect(state.pushed.find((view) => view.server === broken.origin)).not.toHaveProperty('utilisation');
  expect(broken.log.length).toBeGreaterThan(0);
});
