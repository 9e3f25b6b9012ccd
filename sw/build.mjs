// Bundles the Service Worker and the page script with esbuild into sw/bundle/.
import { build } from 'esbuild';
import { mkdirSync, existsSync } from 'node:fs';

const here = new URL('.', import.meta.url).pathname;
mkdirSync(`${here}bundle`, { recursive: true });

const entries = [
  { in: 'src/webpp-sw.ts', out: 'webpp-sw' },
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
  });
}
