/**
 * Faults that the link emulator cannot make, injected on the real server around the webpp
 * plugin (registered with fastify-plugin, so they apply to every route):
 *
 * - `forcedStatus`: every request but the client scripts is answered with this status
 *   before the plugin sees it (a server whose application fails: 503, or that lost its
 *   copies: 404). The answer allows CORS (`Access-Control-Allow-Origin: *`), as a site
 *   with @fastify/cors answers errors: the origin itself sends CORS only on 200/206/304, so
 *   without it a worker could not read the status at all (reported in issue 12's notes).
 * - `breakBodyAfterBytes`: a full-body GET larger than this sends its headers (full
 *   Content-Length) and this many body bytes, then the connection is destroyed (a server
 *   dying while it streams a large file).
 * - `rewriteHeaders`: an onSend hook after the plugin's, so it sees (and may replace) what
 *   the origin sends: a hostile or broken replica.
 */
import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';

export interface FaultState {
  forcedStatus: number | undefined;
  breakBodyAfterBytes: number | undefined;
  /** Called on every response after the origin's hooks; may change its headers. */
  rewriteHeaders: ((request: FastifyRequest, reply: FastifyReply) => void) | undefined;
}

const CLIENT_SCRIPTS = new Set(['/webpp.js', '/webpp-sw.js']);

/** Registered before the webpp plugin: runs first on each request. */
export const faultsBeforeOrigin = fp<{ faults: FaultState }>(async (app: FastifyInstance, { faults }) => {
  app.addHook('onRequest', async (request, reply) => {
    const status = faults.forcedStatus;
    if (status === undefined || CLIENT_SCRIPTS.has(request.url.split('?')[0] ?? '')) return;
    return reply.code(status).header('content-type', 'text/plain').header('cache-control', 'no-store').header('access-control-allow-origin', '*').send(`forced ${status}`);
  });
});

/** Registered after the webpp plugin: runs after its onSend hook. */
export const faultsAfterOrigin = fp<{ faults: FaultState }>(async (app: FastifyInstance, { faults }) => {
  app.addHook('onSend', async (request, reply, payload) => {
    faults.rewriteHeaders?.(request, reply);
    const limit = faults.breakBodyAfterBytes;
    if (limit === undefined || request.method !== 'GET' || reply.statusCode !== 200) return payload;
    // Fastify sets Content-Length of a buffer only after the onSend hooks.
    const size = Buffer.isBuffer(payload) ? payload.length : Number(reply.getHeader('content-length'));
    if (!(size > limit)) return payload;
    const body = await bufferOf(payload);
    reply.header('content-length', String(body.length));
    return brokenBody(reply, body, limit);
  });
});

async function bufferOf(payload: unknown): Promise<Buffer> {
  if (Buffer.isBuffer(payload)) return payload;
  if (typeof payload === 'string') return Buffer.from(payload);
  const chunks: Buffer[] = [];
  for await (const chunk of payload as Readable) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks);
}

/**
 * Time between the last byte written and the break: the link emulator in front relays the
 * bytes as they come, so the client has them before the connection goes (else a loaded
 * machine may turn a break mid-body into a reset before the response head).
 */
const BREAK_AFTER_WRITTEN_MS = 300;

/**
 * The first `sentBytes` of the body, then nothing: once the response has written them to
 * the socket (the write callback of the raw response), the connection is destroyed.
 */
function brokenBody(reply: FastifyReply, body: Buffer, sentBytes: number): Readable {
  const raw = reply.raw;
  const write = raw.write.bind(raw) as (chunk: unknown, callback: (error?: Error | null) => void) => boolean;
  const destroyLater = (): void => void setTimeout(() => raw.socket?.destroy(), BREAK_AFTER_WRITTEN_MS);
  raw.write = ((chunk: unknown) => write(chunk, destroyLater)) as typeof raw.write;
  let pushed = false;
  return new Readable({
    read() {
      if (pushed) return; // never ends: the socket goes first
      pushed = true;
      this.push(body.subarray(0, sentBytes));
    },
  });
}
