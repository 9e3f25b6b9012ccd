/**
 * The add-on script webpp-sw-batch.js: batch transmission and the logical-URL cache
 * (docs/batching.md), imported by the bundled worker when the site turns it on
 * (`data-features="batch"`; addons.ts).
 */
import { registerAddon } from './addons.js';
import { installBatching } from './batch/batch-stage.js';

registerAddon('batch', { install: (client, scope) => void installBatching(scope, client) });
