// Bundles the Service Worker and the page script with esbuild into sw/bundle/.
// The page script is type-checked first (tsconfig.page.json: DOM library), because the
// package's own tsconfig.json compiles the worker sources with the WebWorker library.
import { build } from 'esbuild';
import { minify } from 'terser';
import { mkdirSync, existsSync, writeFileSync } from 'node:fs';
import { basename } from 'node:path';
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
  const result = await build({
    absWorkingDir: here,
    entryPoints: entries,
    outdir: 'bundle',
    bundle: true,
    format: 'iife',
    target: ['chrome110'],
    minify: true,
    sourcemap: 'external',
    legalComments: 'none',
    logLevel: 'warning',
    define: { 'process.env.NODE_ENV': '"production"' },
    write: false,
  });
  // A second pass over esbuild's output: terser's compressor (three passes) and its mangler
  // (names by frequency) take 1.8 kB gzip off the default worker, which every visitor
  // downloads and evaluates at each worker start (issue 26; the third pass alone 56 B).
  // Safe options only: no `unsafe*`, no property mangling (persisted state and messages use
  // property names). The source map maps through both passes to the TypeScript sources.
  const maps = new Map(result.outputFiles.filter((file) => file.path.endsWith('.js.map')).map((file) => [file.path, file.text]));
  for (const file of result.outputFiles) {
    if (!file.path.endsWith('.js')) continue;
    const name = basename(file.path);
    const minified = await minify(file.text.replace(/\n\/\/# sourceMappingURL=.*\n?$/, '\n'), {
      ecma: 2020,
      compress: { passes: 3 },
      mangle: true,
      format: { comments: false },
      sourceMap: { content: maps.get(`${file.path}.map`), url: `${name}.map`, includeSources: true },
    });
    writeFileSync(file.path, minified.code);
    writeFileSync(`${file.path}.map`, /** @type {string} */ (minified.map));
  }
}
