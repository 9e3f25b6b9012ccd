/**
 * One "is this an HTML page?" rule (html-pages.ts) for the Range a rewritten page drops, the
 * pages automatic replication pins home, and the bytes whose digest and size are announced.
 * Before, the first did not count `.shtml` pages and the second neither `.xhtml` nor `.shtml`.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { isPagePath } from '../src/html-pages.js';
import { buildApp, removeTempDirs, tempDir } from './helpers.js';

afterAll(removeTempDirs);
let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

const PAGE = '<!doctype html><html><head><title>t</title></head><body>hello</body></html>';

describe('one rule for HTML pages', () => {
  it('names folders, page extensions and extensionless routes, not other files', () => {
    for (const path of ['/', '/docs/', '/a.html', '/a.HTM', '/a.xhtml', '/a.xht', '/a.shtml', '/about', '/v1.2/about']) expect(isPagePath(path), path).toBe(true);
    for (const path of ['/a.css', '/a.js', '/logo.svg', '/a.html.gz', '/archive.tar']) expect(isPagePath(path), path).toBe(false);
  });

  it('answers a Range on any rewritten page with the whole page', async () => {
    const root = await tempDir();
    for (const name of ['page.html', 'page.shtml']) await writeFile(join(root, name), PAGE);
    app = await buildApp({}, { root });
    for (const url of ['/page.html', '/page.shtml']) {
      const whole = await app.inject(url);
      expect(whole.body, url).toContain('webpp.js');
      const ranged = await app.inject({ url, headers: { range: 'bytes=0-9' } });
      expect([ranged.statusCode, ranged.body], url).toEqual([200, whole.body]);
    }
  });
});
