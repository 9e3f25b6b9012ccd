// The site's own service worker, built with Workbox. Everything down to "webpp" is what the
// site had before; the webpp part is the last block: one strategy, two routes.
import { clientsClaim } from 'workbox-core';
import { registerRoute } from 'workbox-routing';
import { NetworkFirst } from 'workbox-strategies';
import { ReplicaStrategy, replicaRouteMatcher } from '@webpp/sw';

self.skipWaiting();
clientsClaim();

// The existing route: the API, network first with a cached fallback for offline use.
registerRoute(({ url }) => url.origin === self.location.origin && url.pathname.startsWith('/api/'), new NetworkFirst({ cacheName: 'api' }));

// An existing Workbox plugin: logs which server answered each request it sees.
const fetchLog = [];
const fetchLogPlugin = {
  fetchDidSucceed: async ({ request, response }) => {
    fetchLog.push({ url: request.url, status: response.status });
    if (fetchLog.length > 500) fetchLog.shift();
    return response;
  },
};
self.addEventListener('message', (event) => {
  if (event.data?.type === 'example:fetch-log') event.ports[0]?.postMessage(fetchLog.slice());
});

// webpp: bind every replicated resource to the fastest live replica, with failover. The
// site's plugins keep working: each attempt to a replica goes through them.
const replicas = new ReplicaStrategy({ plugins: [fetchLogPlugin] });
registerRoute(replicaRouteMatcher, replicas, 'GET');
registerRoute(replicaRouteMatcher, replicas, 'HEAD');
