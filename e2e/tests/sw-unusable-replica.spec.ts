/**
 * Issue 23, trap 3: a mirror served without CORS (as `python3 -m http.server` serves) fails
 * every request the worker sends it, and the worker falls back to another replica. The
 * worker now says why, once: a console warning on the page naming the mirror and the
 * header it lacks, and a `replica-unusable` event for the dashboard. A mirror with CORS is
 * not reported, and the page stays complete.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect, test } from '@playwright/test';
import { PIXEL_PNG } from '../support/cluster/index.js';
import { PlainStaticServer } from '../support/plain-static-server.js';
import { openControlled, pageRendered, waitForState } from '../support/webpp-page.js';

const CLI = fileURLToPath(new URL('../../origin/dist/cli.js', import.meta.url));
const IMAGES = ['/img/1.png', '/img/2.png', '/img/3.png'];

let workDir: string;
let hosts: PlainStaticServer[] = [];

test.afterEach(async () => {
  await Promise.all(hosts.map((host) => host.stop()));
  await rm(workDir, { recursive: true, force: true });
});

test('a mirror without Access-Control-Allow-Origin is named once in the console and on the dashboard', async ({ page }) => {
  test.setTimeout(120_000);
  workDir = await mkdtemp(join(tmpdir(), 'webpp-unusable-'));
  const a = new PlainStaticServer({ host: 'a.localhost' });
  // b: the nearer mirror, but without CORS (python3 -m http.server); c: farther, with CORS.
  const b = new PlainStaticServer({ host: 'b.localhost', cors: false });
  const c = new PlainStaticServer({ host: 'c.localhost', cors: true, delayMs: 100 });
  hosts = [a, b, c];
  await Promise.all(hosts.map((host) => host.start()));
  const siteDir = join(workDir, 'site');
  await mkdir(join(siteDir, 'img'), { recursive: true });
  await writeFile(
    join(siteDir, 'index.html'),
    '<!doctype html><html><head><meta charset="utf-8"><title>t</title><script src="/webpp.js" async></script></head>' +
      `<body><h1 id="title">t</h1>${IMAGES.map((src) => `<img src="${src}" alt="" width="1" height="1">`).join('')}</body></html>`,
  );
  for (const image of IMAGES) await writeFile(join(siteDir, image), PIXEL_PNG);
  const directoryFile = join(workDir, 'directory.json');
  await writeFile(directoryFile, JSON.stringify({ formatVersion: 1, logicalOrigin: a.origin, entries: [{ logical: '/img/*', servers: [b.origin, c.origin] }] }));
  const outDir = join(workDir, 'out');
  await promisify(execFile)(process.execPath, [CLI, 'build', siteDir, '--out', outDir, '--directory', directoryFile]);
  for (const host of hosts) host.root = outDir;

  const warnings: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'warning' && message.text().startsWith('webpp: the replica')) warnings.push(message.text());
  });
  await openControlled(page, `${a.origin}/index.html`);
  const state = await waitForState(page, (current) => current.events.some((event) => event.type === 'replica-unusable'), {
    what: 'a replica-unusable event',
    between: async () => void (await page.reload()),
  });
  const reports = state.events.filter((event) => event.type === 'replica-unusable');
  expect(reports).toEqual([expect.objectContaining({ server: b.origin, missingHeader: 'Access-Control-Allow-Origin' })]);
  // More loads in the same session: the page stays complete (from c), and nothing more is said.
  for (let load = 0; load < 2; load++) {
    await page.reload();
    expect(await pageRendered(page)).toMatchObject({ images: IMAGES.length, brokenImages: 0 });
  }
  await expect.poll(() => warnings.length, { timeout: 10_000 }).toBe(1);
  expect(warnings[0]).toContain(b.origin);
  expect(warnings[0]).toContain('Access-Control-Allow-Origin');
  expect(warnings.some((warning) => warning.includes(c.origin))).toBe(false);
});
