export { WebppPolicy, createWebppPolicy } from './policy.js';
export { WEBPP_DEFAULTS, resolveWebppOptions, webppOptionsFrom, type WebppOptions } from './options.js';
export { SNAPSHOT_FORMAT_VERSION as WEBPP_SNAPSHOT_FORMAT_VERSION, type WebppSnapshot } from './snapshot.js';
