/**
 * The add-on script webpp-sw-aggregate.js: the client aggregate for first visits
 * (client-aggregate.ts; docs/service-worker.md), imported by the bundled worker when the
 * site turns it on (`data-features="aggregate"`; addons.ts).
 */
import { registerAddon } from './addons.js';
import { createClientAggregate } from './client-aggregate.js';

registerAddon('aggregate', { clientAggregate: createClientAggregate });
