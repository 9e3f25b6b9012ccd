/**
 * The bundled service worker, /webpp-sw.js (registered by /webpp.js with scope "/"). It
 * takes control of open pages at once (skipWaiting + clients.claim), binds every request
 * whose logical URL has bindings, and lets every other request pass untouched: for those it
 * does not even call respondWith. Options come from its URL: /webpp-sw.js?policy=webpp.
 * Opt-in features are add-on scripts beside it, imported now, during the worker's first
 * evaluation, when the options ask for them (addons.ts).
 */
import { POLICIES_ADDON, loadAddons } from './addons.js';
import { parseWorkerOptions } from './config.js';
import { ReplicaClient } from './replica-client.js';
import { PageScriptCache } from './page-script-cache.js';
import { NavigationPreload } from './navigation-preload.js';

declare const self: ServiceWorkerGlobalScope;

const parsed = parseWorkerOptions(new URL(self.location.href).searchParams);
const wanted = [...parsed.options.features, ...(parsed.options.policy === 'webpp' ? [] : [POLICIES_ADDON])];
const addons = loadAddons(wanted, self.location.href, (url) => self.importScripts(url), parsed.errors);
const policies = addons[POLICIES_ADDON]?.policies;
const offlineCopies = addons['offline']?.offlineCopies;
const integrity = addons['integrity']?.integrity;
const clientAggregate = addons['aggregate']?.clientAggregate;
const client = new ReplicaClient({
  parsed,
  ...(policies ? { policies } : {}),
  ...(offlineCopies ? { offlineCopies } : {}),
  ...(integrity ? { integrity } : {}),
  ...(clientAggregate ? { clientAggregate } : {}),
});
client.attachMessageListener(self);
for (const addon of Object.values(addons)) addon.install?.(client, self);

// A copy of /webpp.js, which answers the pages' requests for it: no request on the page's
// path, and the script is there when the site's own origin is down or hangs.
const pageScript = new PageScriptCache({
  scriptUrl: new URL('/webpp.js', self.location.href).href,
  onServedFromCache: () => client.reporter.count('pageScriptFromCache'),
});

// The browser sends a navigation's request while the worker starts (navigation-preload.ts);
// not with batch transmission, whose page request is its own.
const navigationPreload = new NavigationPreload(self.registration, addons['batch'] === undefined);

/** ServiceWorker static routing (Chromium ≥ 123); not yet in TypeScript's lib. */
type Routable = ExtendableEvent & { addRoutes?: (rules: object) => Promise<void> };

self.addEventListener('install', (event: Routable) => {
  void self.skipWaiting();
  // The copy first: the route answers from it, and falls back to the network without it.
  event.waitUntil(pageScript.install().then(() => event.addRoutes?.(pageScript.routerRule())).catch(() => undefined));
});

self.addEventListener('activate', (event) => {
  event.waitUntil(Promise.all([self.clients.claim(), pageScript.activate(), navigationPreload.activate()]));
});

self.addEventListener('fetch', (event) => {
  if (pageScript.matches(event.request)) {
    event.respondWith(pageScript.respond(event.request, (promise) => event.waitUntil(promise)));
    return;
  }
  // Where the browser answers the script by the static route, its copy is checked on navigations.
  if (event.request.mode === 'navigate') pageScript.checkInBackground((promise) => event.waitUntil(promise));
  // The pipeline: (an add-on's front stage) → route → plan → attempt → serve → learn (replica-client.ts, plugins.ts).
  client.handleFetch(event, navigationPreload.ioFor(event));
});
