/**
 * Routes of the test site that are not files: they belong to the site behind the origin,
 * not to webpp (the way a real site has APIs and redirects next to its static files).
 * - `POST /api/echo`: echoes its body and the replica's name (the body is also logged).
 * - `GET /set-cookie`: sets a cookie named after the replica (cookies must never leak).
 * - `GET /api/time`: a JSON answer of the site's own (no file, no bindings), like a page's API call.
 * - a 301 for every site file with `redirectTo`.
 */
import type { FastifyInstance } from 'fastify';
import { RequestLog } from './request-log.js';
import type { Site } from './site.js';

export function siteRoutes(app: FastifyInstance, site: Site, replica: string): void {
  app.addContentTypeParser('text/plain', { parseAs: 'string' }, (_request, body, done) => done(null, body));
  app.post('/api/echo', async (request, reply) => {
    const entry = RequestLog.entryOf(request.raw);
    if (entry) entry.body = typeof request.body === 'string' ? request.body : JSON.stringify(request.body);
    return reply.header('cache-control', 'no-store').send({ replica, received: request.body });
  });
  app.get('/api/time', async (_request, reply) => reply.header('cache-control', 'no-store').send({ replica, atMs: Date.now() }));
  app.get('/set-cookie', async (_request, reply) =>
    reply
      .header('set-cookie', `replica-${replica}=secret; Path=/; SameSite=None; Secure`)
      .header('content-type', 'text/html; charset=utf-8')
      .send('<!doctype html><title>cookie set</title>'),
  );
  for (const [path, file] of Object.entries(site)) {
    const target = file.redirectTo;
    if (target === undefined) continue;
    app.route({ method: ['GET', 'HEAD'], url: path, handler: async (_request, reply) => reply.code(301).header('location', target).send() });
  }
}
