#!/usr/bin/env node
// Bundles src/sw.js (Workbox + @webpp/sw) into site/sw.js with esbuild.
import { build } from 'esbuild';
import { fileURLToPath } from 'node:url';

export const SITE_DIR = fileURLToPath(new URL('./site/', import.meta.url));

export async function buildWorker() {
  await build({
    absWorkingDir: fileURLToPath(new URL('.', import.meta.url)),
    entryPoints: ['src/sw.js'],
    outfile: 'site/sw.js',
    bundle: true,
    format: 'iife',
    target: ['chrome110', 'firefox115', 'safari16'],
    minify: true,
    sourcemap: true,
    // Workbox's development-only logging and assertions stay out of the bundle.
    define: { 'process.env.NODE_ENV': '"production"' },
    logLevel: 'warning',
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await buildWorker();
