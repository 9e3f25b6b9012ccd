/**
 * The add-on script webpp-sw-policies.js: every policy of @webpp/core's registry beside
 * `webpp` (the paper's extended Refresh and its presets, `hedged`, the evaluation's
 * baselines), imported by the bundled worker when the options name one (addons.ts).
 */
import { createPolicy } from '@webpp/core';
import { registerAddon } from './addons.js';

registerAddon('policies', { policies: createPolicy });
