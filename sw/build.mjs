// Bundles the Service Worker and the page script with esbuild into sw/bundle/.
// The page script is type-checked first (tsconfig.page.json: DOM library), because the
// package's own tsconfig.json compiles the worker sources with the WebWorker library.
import { build } from 'esbuild';
import { mkdirSync, existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';

const here = new URL('.', import.meta.url).pathname;
mkdirSync(`${here}bundle`, { recursive: true });

if (existsSync(`${here}src/webpp.ts`)) {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const check = spawnSync(process.execPath, [tsc, '-p', `${here}tsconfig.page.json`], { stdio: 'inherit' });
  if (check.status !== 0) process.exit(check.status ?? 1);
}

// The default worker, its opt-in add-ons (src/addons.ts: imported by the worker at start-up
// when the options ask for them) and the page script.
const entries = [
  { in: 'src/webpp-sw.ts', out: 'webpp-sw' },
  { in: 'src/webpp-sw-batch.ts', out: 'webpp-sw-batch' },
  { in: 'src/webpp-sw-offline.ts', out: 'webpp-sw-offline' },
  { in: 'src/webpp-sw-policies.ts', out: 'webpp-sw-policies' },
  { in: 'src/webpp-sw-integrity.ts', out: 'webpp-sw-integrity' },
  { in: 'src/webpp-sw-aggregate.ts', out: 'webpp-sw-aggregate' },
  { in: 'src/webpp.ts', out: 'webpp' },
].filter((entry) => existsSync(`${here}${entry.in}`));

if (entries.length > 0) {
  await build({
    absWorkingDir: here,
    entryPoints: entries,
    outdir: 'bundle',
    bundle: true,
    format: 'iife',
    target: ['chrome110'],
    minify: true,
    sourcemap: true,
    legalComments: 'none',
    logLevel: 'warning',
    define: { 'process.env.NODE_ENV': '"production"' },
  });
}
