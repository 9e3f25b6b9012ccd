/**
 * A site's own Workbox service worker that adds webpp replica binding in a few lines (the
 * second integration path), plus a test plugin that tags each physical request and counts
 * Workbox lifecycle callbacks. Bundled by the test with esbuild.
 */
import { clientsClaim } from 'workbox-core';
import { registerRoute } from 'workbox-routing';
import type { WorkboxPlugin } from 'workbox-core/types.js';
import { ReplicaStrategy, replicaRouteMatcher } from '../../sw/src/index.js';

declare const self: ServiceWorkerGlobalScope;

const calls = { requestWillFetch: 0, fetchDidSucceed: 0, fetchDidFail: 0, handlerDidRespond: 0 };

const taggingPlugin: WorkboxPlugin = {
  requestWillFetch: async ({ request }) => {
    calls.requestWillFetch++;
    const headers = new Headers(request.headers);
    // A CORS-safelisted header with a value of ours: @webpp/origin answers preflights only
    // for the headers the worker itself sends, so a custom header (x-site-plugin) would
    // make every cross-origin replica request fail its preflight.
    headers.set('accept-language', 'x-site-plugin');
    return new Request(request, { headers });
  },
  fetchDidSucceed: async ({ response }) => {
    calls.fetchDidSucceed++;
    return response;
  },
  fetchDidFail: async () => {
    calls.fetchDidFail++;
  },
  handlerDidRespond: async () => {
    calls.handlerDidRespond++;
  },
};

// --- what a site adds to its Workbox worker ---------------------------------------
const replicas = new ReplicaStrategy({ plugins: [taggingPlugin] });
registerRoute(replicaRouteMatcher, replicas, 'GET');
registerRoute(replicaRouteMatcher, replicas, 'HEAD');
// ------------------------------------------------------------------------------------

void self.skipWaiting();
clientsClaim();

self.addEventListener('message', (event) => {
  if ((event.data as { type?: string } | null)?.type === 'plugin-calls') event.ports[0]?.postMessage({ ...calls });
});
