/**
 * A site's own Workbox worker as sites usually have it: a precached app shell
 * (workbox-precaching: the page, its stylesheet and script, revisioned), a runtime route of
 * its own, and then webpp's replica strategy for everything else. Bundled by the test.
 */
import { clientsClaim } from 'workbox-core';
import { addPlugins, precacheAndRoute } from 'workbox-precaching';
import { registerRoute } from 'workbox-routing';
import { NetworkFirst } from 'workbox-strategies';
import { ReplicaStrategy, replicaCacheLearningPlugin, replicaRouteMatcher } from '../../sw/src/index.js';

declare const self: ServiceWorkerGlobalScope;

void self.skipWaiting();
clientsClaim();

// webpp reads the bindings of the precached pages (they never reach the replica strategy).
addPlugins([replicaCacheLearningPlugin]);
precacheAndRoute([
  { url: '/index.html', revision: '1' },
  { url: '/style.css', revision: '1' },
  { url: '/app.js', revision: '1' },
]);
registerRoute(({ url }) => url.pathname === '/data.json', new NetworkFirst({ cacheName: 'api' }));

// --- what a site adds to its Workbox worker ---------------------------------------
const replicas = new ReplicaStrategy();
registerRoute(replicaRouteMatcher, replicas, 'GET');
registerRoute(replicaRouteMatcher, replicas, 'HEAD');
// ------------------------------------------------------------------------------------
