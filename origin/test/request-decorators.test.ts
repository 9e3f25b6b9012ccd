/**
 * Per-request data of the response plugins travels on request decorators, which code
 * registered after webppOrigin (batch transmission, a site's own hooks) reads.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type {} from '../src/http/bindings-header-plugin.js'; // the request decorators' types
import type {} from '../src/http/injected-etag.js';
import { ORIGIN_A, ORIGIN_B, buildApp, removeTempDirs, tempDir } from './helpers.js';

afterAll(removeTempDirs);

const PAGE = '<!doctype html><html><head><link rel="stylesheet" href="/style.css"></head><body><img src="img/a.png"><a href="/next.html">n</a></body></html>';

async function appWithProbe(): Promise<{ app: FastifyInstance; seen: Map<string, unknown> }> {
  const root = await tempDir();
  await writeFile(join(root, 'page.html'), PAGE);
  await writeFile(join(root, 'style.css'), 'body { color: red }');
  const seen = new Map<string, unknown>();
  const app = await buildApp(
    { directory: { formatVersion: 1, entries: [{ logical: '/img/*', servers: [ORIGIN_A, ORIGIN_B] }] } },
    {
      root,
      routes: (instance) => {
        instance.addHook('onSend', async (request, _reply, payload) => {
          seen.set(request.url, { page: request.webppPage, injectedValidator: request.webppSentInjectedValidator });
          return payload;
        });
      },
    },
  );
  return { app, seen };
}

describe('request.webppPage', () => {
  it('holds the logical URL and the embedded resources of a pre-processed page, from the cache too, and nothing for other responses', async () => {
    const { app, seen } = await appWithProbe();
    try {
      const expected = { pageUrl: `${ORIGIN_A}/page.html`, embeddedUrls: [`${ORIGIN_A}/style.css`, `${ORIGIN_A}/img/a.png`] };
      for (let round = 0; round < 2; round += 1) {
        expect((await app.inject('/page.html')).statusCode).toBe(200);
        expect(seen.get('/page.html')).toEqual({ page: expected, injectedValidator: false });
      }
      expect((await app.inject('/style.css')).statusCode).toBe(200);
      expect(seen.get('/style.css')).toEqual({ page: null, injectedValidator: false });
    } finally {
      await app.close();
    }
  });
});

describe('request.webppSentInjectedValidator', () => {
  it('is set when a conditional request names an injected page\'s validator', async () => {
    const { app, seen } = await appWithProbe();
    try {
      const etag = String((await app.inject('/page.html')).headers.etag);
      expect(etag).toMatch(/-webpp"$/);
      const revalidated = await app.inject({ url: '/page.html', headers: { 'if-none-match': etag } });
      expect(revalidated.statusCode).toBe(304);
      expect(revalidated.headers.etag).toBe(etag);
      expect(seen.get('/page.html')).toMatchObject({ injectedValidator: true });
    } finally {
      await app.close();
    }
  });
});
