/**
 * The endpoint workers report their own response times to (issue 13 §6):
 *
 *   POST /.well-known/webpp/client-reports     application/json, at most 4 KiB
 *   {"rows":[{"server":"https://b.example","responseMs":85.2}]}      → 204
 *
 * Taken from the site's own pages only: the browser's `Origin` header must be this server's
 * or the site's logical origin, and `Sec-Fetch-Site`, when sent, `same-origin` (else 403
 * WEBPP_ERR_FORBIDDEN). The body is validated against a schema (else 400 WEBPP_ERR_BAD_BODY,
 * also for malformed JSON, another content type or a body over the size limit); a network
 * class over its rate limit gets 429 WEBPP_ERR_RATE_LIMITED with Retry-After. What is kept of
 * a report: client-aggregates.ts (one report per reporter and interval counts). Nothing of the request itself is logged or stored.
 */
import { STATUS_CODES } from 'node:http';
import type { FastifyError, FastifyInstance } from 'fastify';
import { Ajv } from 'ajv';
import { Type, type Static } from 'typebox';
import { CLIENT_REPORT_PATH, MAX_CLIENT_REPORT_BYTES, MAX_CLIENT_REPORT_ROWS } from '@webpp/core';
import { WEBPP_ERR_BAD_BODY, WEBPP_ERR_FORBIDDEN, WEBPP_ERR_RATE_LIMITED } from '../errors.js';
import type { ClientAggregates } from './client-aggregates.js';
import type { NetworkClasses } from './network-class.js';

const ReportBody = Type.Object(
  {
    rows: Type.Array(
      Type.Object(
        {
          server: Type.String({ minLength: 8, maxLength: 2048, pattern: '^https?://' }),
          responseMs: Type.Number({ minimum: 0, maximum: 600_000 }),
        },
        { additionalProperties: false },
      ),
      { maxItems: MAX_CLIENT_REPORT_ROWS },
    ),
  },
  { additionalProperties: false },
);
// Strict, unlike Fastify's route validation (which drops unknown properties): a report
// carrying anything else is refused.
const ajv = new Ajv({ strict: true, allErrors: false });
const isReport = ajv.compile<Static<typeof ReportBody>>(ReportBody);

export interface ReportRouteOptions {
  aggregates: ClientAggregates;
  classes: NetworkClasses;
  /** Origins whose pages may report (this server's and the site's). */
  allowedOrigins: ReadonlySet<string>;
  isKnownServer: (server: string) => boolean;
  now?: () => number;
}

export async function clientReportRoute(app: FastifyInstance, options: ReportRouteOptions): Promise<void> {
  const { aggregates, classes, allowedOrigins, isKnownServer } = options;
  const now = options.now ?? Date.now;
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit: MAX_CLIENT_REPORT_BYTES }, (_request, body, done) => {
    try {
      done(null, JSON.parse(body as string));
    } catch {
      done(new WEBPP_ERR_BAD_BODY('expected JSON'), undefined);
    }
  });
  // Parser errors (size, media type) are a bad body too; everything else keeps its own code.
  app.setErrorHandler((error: FastifyError, _request, reply) => {
    const code = String(error.code ?? '').startsWith('FST_ERR_CTP_') ? new WEBPP_ERR_BAD_BODY(error.message) : error;
    const status = code.statusCode ?? 500;
    return reply.code(status).send({ statusCode: status, code: code.code, error: STATUS_CODES[status] ?? 'Error', message: code.message });
  });
  app.post(CLIENT_REPORT_PATH, {
    onRequest: async (request) => {
      const origin = request.headers.origin;
      const site = request.headers['sec-fetch-site'];
      if (origin === undefined || !allowedOrigins.has(origin) || (site !== undefined && site !== 'same-origin')) {
        throw new WEBPP_ERR_FORBIDDEN("client reports are taken from the site's own pages only");
      }
    },
  }, async (request, reply) => {
    const body: unknown = request.body;
    if (!isReport(body)) throw new WEBPP_ERR_BAD_BODY(ajv.errorsText(isReport.errors, { dataVar: 'report' }));
    reply.header('cache-control', 'no-store');
    const classId = classes.classOf(request.ip);
    const reporterId = classes.reporterOf(request.ip);
    if (classId !== undefined && reporterId !== undefined && !aggregates.take(classId, reporterId, body.rows, isKnownServer, now())) {
      reply.header('retry-after', '60');
      throw new WEBPP_ERR_RATE_LIMITED('client reports from this network');
    }
    return reply.code(204).send();
  });
}
