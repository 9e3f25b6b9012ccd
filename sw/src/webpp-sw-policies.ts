/**
 * The add-on script webpp-sw-policies.js: the policies of @webpp/core's registry beside
 * `webpp` (the paper's extended Refresh and its presets, `hedged`, the evaluation's
 * baselines) with their latency table's rows for the state snapshot (table-views.ts),
 * imported by the bundled worker when the options name one (addons.ts). It does not carry
 * `webpp`, which the default worker has (worker-engine.ts).
 */
import { createTablePolicy } from '@webpp/core';
import { registerAddon } from './addons.js';
import { withTableViews } from './table-views.js';

registerAddon('policies', { policies: withTableViews(createTablePolicy) });
