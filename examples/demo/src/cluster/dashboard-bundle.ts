/**
 * Bundles the dashboard's TypeScript (src/dashboard/) into site/js/dashboard.js with
 * esbuild. The launcher runs it on every start, so the bundle is never stale.
 */
import { build } from 'esbuild';
import { fileURLToPath } from 'node:url';

/** examples/demo/, from src/cluster/ or dist/cluster/. */
const DEMO_DIR = fileURLToPath(new URL('../../', import.meta.url));
export const SITE_DIR = fileURLToPath(new URL('../../site/', import.meta.url));

export async function bundleDashboard(): Promise<void> {
  await build({
    absWorkingDir: DEMO_DIR,
    entryPoints: ['src/dashboard/main.ts'],
    outfile: 'site/js/dashboard.js',
    bundle: true,
    format: 'iife',
    target: ['chrome110', 'firefox115', 'safari16'],
    minify: true,
    sourcemap: true,
    legalComments: 'none',
    logLevel: 'warning',
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await bundleDashboard();
