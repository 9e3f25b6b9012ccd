/**
 * The add-on script webpp-sw-offline.js: offline copies (offline-cache.ts; docs/service-worker.md
 * "Offline"), imported by the bundled worker when the site turns them on
 * (`data-features="offline"`; addons.ts).
 */
import { registerAddon } from './addons.js';
import { createOfflineCopies } from './offline-cache.js';

registerAddon('offline', { offlineCopies: createOfflineCopies });
