/**
 * A site as a site owner brings it to webpp (not the repo's demo fixtures): pages with the
 * one-tag setup and relative URLs, `<base>`, srcset, CSS url() and a web font, an audio
 * file (Range requests), page scripts using fetch() and XHR, a POST form, a login cookie,
 * redirects within the site and to another host, and an image from a CDN without CORS.
 * The site's dynamic routes are registered on every replica (ownerRoutes), as the same
 * application runs behind each one.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { PIXEL_PNG, type Site } from './cluster/index.js';

const require = createRequire(import.meta.url);
const FONT_WOFF2 = readFileSync(require.resolve('@fontsource/fraunces/files/fraunces-latin-400-normal.woff2'));

/** A mono 8-bit PCM WAV of a 440 Hz tone: a media file the browser fetches with Range. */
function toneWav(seconds: number, sampleRateHz = 8000): Buffer {
  const samples = sampleRateHz * seconds;
  const header = Buffer.alloc(44);
  header.write('RIFF', 0);
  header.writeUInt32LE(36 + samples, 4);
  header.write('WAVEfmt ', 8);
  header.writeUInt32LE(16, 16); // fmt chunk size
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(1, 22); // mono
  header.writeUInt32LE(sampleRateHz, 24);
  header.writeUInt32LE(sampleRateHz, 28); // bytes per second
  header.writeUInt16LE(1, 32); // block align
  header.writeUInt16LE(8, 34); // bits per sample
  header.write('data', 36);
  header.writeUInt32LE(samples, 40);
  const body = Buffer.alloc(samples);
  for (let i = 0; i < samples; i++) body[i] = 128 + Math.round(60 * Math.sin((i / sampleRateHz) * 2 * Math.PI * 440));
  return Buffer.concat([header, body]);
}

/** The one tag of the setup (README), with the worker's options as data-* attributes. */
function scriptTag(dataAttributes: string): string {
  return `<script src="/webpp.js" ${dataAttributes} async></script>`;
}

function pageWith(title: string, body: string, head: string, tag = scriptTag('')): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title>${head}<link rel="stylesheet" href="css/site.css">${tag}</head><body>${body}</body></html>`;
}

/** The site's files; `cdnOrigin` serves /pic.png without CORS; `dataAttributes` go on the script tag. */
export function ownerSite(cdnOrigin: string, dataAttributes = ''): Site {
  const html = 'text/html; charset=utf-8';
  const page = (title: string, body: string, head = ''): string => pageWith(title, body, head, scriptTag(dataAttributes));
  return {
    '/index.html': {
      contentType: html,
      body: page(
        'home',
        `<h1 id="title">Home</h1>
<img id="srcset" src="img/a.png" srcset="img/a.png 1x, img/a2.png 2x" width="1" height="1">
<img id="cdn" src="${cdnOrigin}/pic.png" width="1" height="1">
<img id="moved-away" src="/go/pic-elsewhere" width="1" height="1">
<div id="bg" class="bg">background</div>
<audio id="audio" src="media/tone.wav" preload="auto"></audio>
<form id="form" method="post" action="/form"><input name="q" value="hello"><button>send</button></form>
<p id="part2">two</p>
<script src="js/app.js?v=3"></script>`,
      ),
    },
    '/docs/index.html': { contentType: html, body: page('docs', `<h1 id="title">Docs</h1><img id="based" src="img/a.png">`, '<base href="/">') },
    '/signin.html': { contentType: html, body: page('sign in', `<h1 id="title">Sign in</h1><img src="img/a.png"><form id="login" method="post" action="/login"><button>sign in</button></form>`) },
    '/thanks.html': { contentType: html, body: page('thanks', `<h1 id="title">Thanks</h1>`) },
    '/landing.html': { contentType: html, body: page('landing', `<h1 id="title">Landing</h1>`) },
    '/css/site.css': {
      contentType: 'text/css; charset=utf-8',
      body: `@font-face { font-family: Owner; src: url(../fonts/owner.woff2) format("woff2"); }
h1 { font-family: Owner, serif; color: rgb(10, 20, 30); }
.bg { background-image: url("../img/bg.png?x=1#frag"); }`,
    },
    '/fonts/owner.woff2': { contentType: 'font/woff2', body: FONT_WOFF2 },
    '/img/a.png': { contentType: 'image/png', body: PIXEL_PNG },
    '/img/a2.png': { contentType: 'image/png', body: PIXEL_PNG },
    '/img/bg.png': { contentType: 'image/png', body: PIXEL_PNG },
    '/media/tone.wav': { contentType: 'audio/wav', body: toneWav(2) },
    '/js/app.js': { contentType: 'text/javascript; charset=utf-8', body: 'window.appLoaded = true;' },
    '/data.json': { contentType: 'application/json', body: (replica) => JSON.stringify({ replica }) },
  };
}

/** The site's application routes, the same on every replica (`replica` only labels answers). */
export function ownerRoutes(app: FastifyInstance, replica: string, cdnOrigin: string, dataAttributes = ''): void {
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => done(null, body));
  // Sign-in: a POST that sets the session cookie, then the visitor's own page, marked for one
  // user the way Rails marks its pages ("private").
  app.post('/login', async (_request, reply) => reply.header('set-cookie', 'session=s3cret; Path=/; HttpOnly').redirect('/account', 303));
  app.get('/account', async (request, reply) =>
    reply
      .header('content-type', 'text/html; charset=utf-8')
      .header('cache-control', 'max-age=0, private, must-revalidate')
      .send(pageWith('account', `<h1 id="title">${request.headers.cookie?.includes('session=') === true ? 'Signed in' : 'Signed out'}</h1>`, '', scriptTag(dataAttributes))),
  );
  app.get('/api/empty', async (_request, reply) => reply.code(204).send());
  app.get('/moved', async (_request, reply) => reply.code(301).header('location', '/landing.html').send());
  // Off-site redirects: a download on a CDN, a sign-in on another host. The application
  // sends CORS headers on them itself (as @fastify/cors would), the CDN does not.
  const offSite = (target: string) => async (_request: FastifyRequest, reply: FastifyReply) =>
    reply.code(302).header('location', target).header('access-control-allow-origin', '*').send();
  app.route({ method: ['GET', 'HEAD'], url: '/go/pic-elsewhere', handler: offSite(`${cdnOrigin}/pic.png`) });
  app.route({ method: ['GET', 'HEAD'], url: '/go/elsewhere', handler: offSite(`${cdnOrigin}/landing.html`) });
  // Server-sent events: one now, two more after a 6 s silence (longer than fast's 5 s timeoutCeilingMs).
  app.get('/events', (request, reply) => {
    reply.hijack();
    reply.raw.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store', 'access-control-allow-origin': '*' });
    let sent = 0;
    const send = (): void => void reply.raw.write(`data: ${replica}-${sent++}\n\n`);
    send();
    const timers = [setTimeout(send, 6_000), setTimeout(send, 6_500)];
    request.raw.on('close', () => timers.forEach(clearTimeout));
  });
  app.post('/form', async (request, reply) =>
    reply.code(303).header('location', `/thanks.html?from=${replica}&body=${encodeURIComponent(String(request.body))}`).send(),
  );
}
