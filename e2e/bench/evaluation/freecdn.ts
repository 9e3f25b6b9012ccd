/**
 * freecdn (npm `freecdn-js` 0.4.1, the real package) as a policy of the evaluation (issue 22
 * §1): its loader and its worker are served by the logical origin, and its manifest makes
 * every replica a mirror of the /files/ folder.
 *
 * - The loader (dist/freecdn-loader.js) is the package's development build, as `freecdn js
 *   --make --dev` installs it: in the page it registers itself as the worker and reloads the
 *   page once the worker is ready; in the worker it loads freecdn-internal/dev/freecdn-main.js
 *   with importScripts (the release build differs only in loading a hash-checked, minified
 *   copy of the same main script, and in the Brotli decoder's manifest, unused here).
 * - The manifest (freecdn-manifest.txt, fetched by the worker from its own site, which it
 *   does not verify) maps the folder /files/ to each replica's /files/: a page request for
 *   /files/x?q goes to <replica>/files/x?q (freecdn's folder mapping keeps the rest of the
 *   path and the query). The original URL is freecdn's last resort (weight −1), as in any
 *   freecdn site.
 * - freecdn chooses the replica itself: weights from a cumulative mean of Resource Timing's
 *   first byte per host (the replicas send Timing-Allow-Origin), sequential failover, a
 *   parallel try after 10 s without a response head (its defaults; see
 *   packages/simulator/src/policies/freecdn.ts for the model).
 */
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const require = createRequire(import.meta.url);
const DIST = join(require.resolve('freecdn-js/package.json'), '..', 'dist');

/** The loader's path on the site: the page adds it as a script; it registers itself as the worker. */
export const FREECDN_LOADER_PATH = '/freecdn-loader.js';

/** Copies freecdn's loader and its development main and fail scripts into the site's folder. */
export function writeFreecdnScripts(root: string): void {
  mkdirSync(join(root, 'freecdn-internal', 'dev'), { recursive: true });
  copyFileSync(join(DIST, 'freecdn-loader.js'), join(root, FREECDN_LOADER_PATH));
  for (const file of ['freecdn-main.js', 'fail.js']) copyFileSync(join(DIST, file), join(root, 'freecdn-internal', 'dev', file));
}

/** freecdn's manifest: the /files/ folder, mirrored by each replica in `origins`. */
function freecdnManifest(origins: readonly string[]): string {
  return ['/files/', ...origins.map((origin) => `\t${origin}/files/`), ''].join('\n');
}

export function writeFreecdnManifest(root: string, origins: readonly string[]): void {
  writeFileSync(join(root, 'freecdn-manifest.txt'), freecdnManifest(origins));
}
