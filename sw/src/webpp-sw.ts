/**
 * The bundled service worker, /webpp-sw.js (registered by /webpp.js with scope "/"). It
 * takes control of open pages at once (skipWaiting + clients.claim), binds every request
 * whose logical URL has bindings, and lets every other request pass untouched: for those it
 * does not even call respondWith. Options come from its URL: /webpp-sw.js?preset=fast.
 */
import { parseWorkerOptions, workerTimeouts } from './config.js';
import { ReplicaClient } from './replica-client.js';
import { PageScriptCache } from './page-script-cache.js';

declare const self: ServiceWorkerGlobalScope;

const client = new ReplicaClient({ parsed: parseWorkerOptions(new URL(self.location.href).searchParams) });
client.attachMessageListener(self);
client.enableBatching(self); // batch transmission + logical-URL cache (docs/batching.md)

// A copy of /webpp.js, for pages that a replica serves while the site's own origin is down.
const pageScript = new PageScriptCache({
  scriptUrl: new URL('/webpp.js', self.location.href).href,
  networkTimeoutMs: workerTimeouts(client.options).initialTimeoutMs,
  onServedFromCache: () => client.reporter.count('pageScriptFromCache'),
});

self.addEventListener('install', (event) => {
  void self.skipWaiting();
  event.waitUntil(pageScript.install());
});

self.addEventListener('activate', (event) => {
  event.waitUntil(Promise.all([self.clients.claim(), pageScript.activate()]));
});

self.addEventListener('fetch', (event) => {
  if (pageScript.matches(event.request)) {
    event.respondWith(pageScript.respond(event.request, (promise) => event.waitUntil(promise)));
    return;
  }
  // The pipeline: batch stage → route → plan → attempt → serve → learn (replica-client.ts).
  client.handleFetch(event);
});
