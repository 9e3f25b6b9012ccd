/** A site's own service worker (a TypeScript file) bundled as a browser would load it. */
import { build } from 'esbuild';

export async function bundleSiteWorker(file: URL): Promise<string> {
  const result = await build({
    entryPoints: [file.pathname],
    bundle: true,
    write: false,
    format: 'iife',
    target: ['chrome110'],
    define: { 'process.env.NODE_ENV': '"production"' },
    logLevel: 'warning',
  });
  return result.outputFiles[0]?.text ?? '';
}
