/**
 * A site's own Workbox worker with webpp replica binding that leaves to the browser what it
 * cannot improve (`leaveToBrowser: true`, sw/src/workbox.ts). Bundled by the test with esbuild.
 */
import { clientsClaim } from 'workbox-core';
import { registerRoute } from 'workbox-routing';
import { ReplicaStrategy, replicaRouteMatcher } from '../../sw/src/index.js';

declare const self: ServiceWorkerGlobalScope;

const replicas = new ReplicaStrategy({ leaveToBrowser: true });
registerRoute(replicaRouteMatcher, replicas, 'GET');
registerRoute(replicaRouteMatcher, replicas, 'HEAD');

void self.skipWaiting();
clientsClaim();
