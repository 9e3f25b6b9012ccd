/**
 * The bundled service worker, /webpp-sw.js (registered by /webpp.js with scope "/"). It
 * takes control of open pages at once (skipWaiting + clients.claim), binds every request
 * whose logical URL has bindings, and lets every other request pass untouched: for those it
 * does not even call respondWith. Options come from its URL: /webpp-sw.js?preset=fast.
 */
import './policies/register.js'; // the evaluation policies (single-n, random, round-robin, optimal, hedged)
import { parseWorkerOptions } from './config.js';
import { ReplicaClient } from './replica-client.js';

declare const self: ServiceWorkerGlobalScope;

const client = new ReplicaClient({ parsed: parseWorkerOptions(new URL(self.location.href).searchParams) });
client.attachMessageListener(self);

self.addEventListener('install', () => {
  void self.skipWaiting();
});

self.addEventListener('activate', (event) => {
  event.waitUntil(self.clients.claim());
});

self.addEventListener('fetch', (event) => {
  let route;
  try {
    route = client.route(event.request);
  } catch {
    return; // fail open: the browser fetches as if there were no worker
  }
  if (route === 'pass') return;
  event.respondWith(
    client.respond(event.request, {
      fetch: (request) => fetch(request),
      waitUntil: (promise) => event.waitUntil(promise),
    }),
  );
});
