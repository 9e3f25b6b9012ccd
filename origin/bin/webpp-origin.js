#!/usr/bin/env node
// The `webpp-origin` command. This file is in the source tree, not in dist/, so that
// `npm ci` on a fresh clone links the command before anything is built: npm skips a bin
// whose file is missing at install time, and `npx webpp-origin` then asked the npm
// registry for a package of that name instead of running ours.
let cli;
try {
  cli = await import('../dist/cli.js');
} catch (error) {
  if (error?.code !== 'ERR_MODULE_NOT_FOUND' || !String(error.message).includes('dist/cli.js')) throw error;
  console.error('webpp-origin is not built yet: run `npm run build` (in the repository: npm ci && npm run build)');
  process.exit(1);
}
await cli.main(process.argv.slice(2));
