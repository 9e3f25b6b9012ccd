/**
 * The add-on script webpp-sw-integrity.js: content integrity of replicas' bodies against the
 * own origin's digests (integrity-guard.ts; docs/service-worker.md "Integrity"), imported by
 * the bundled worker when the site turns it on (`data-features="integrity"`; addons.ts).
 */
import { registerAddon } from './addons.js';
import { createIntegrity } from './integrity-guard.js';

registerAddon('integrity', { integrity: createIntegrity });
