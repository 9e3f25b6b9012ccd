/**
 * Test sites for a cluster: a site is a map of paths to files, written to a folder per
 * replica (each replica's own copy, which the real origin serves with @fastify/static).
 * A file's body may depend on the replica's name, to tell replicas apart in tests, and a
 * replica may hold only some paths. `<!--webpp-->` in HTML becomes the page script tag.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

export interface SiteFile {
  contentType: string;
  /** Answer with a 301 redirect to this path instead of a body (a route of the site). */
  redirectTo?: string;
  /** The body, or a function of the replica's name. */
  body: string | Buffer | ((replica: string) => string | Buffer);
  /** The site's Cache-Control for this file. Default "no-store". */
  cacheControl?: string;
}

/** Path ("/index.html") → file. "/" serves "/index.html". */
export type Site = Record<string, SiteFile>;

/** The page script tag with worker parameters as data attributes (sw/README: data-*). */
export function pageScriptTag(workerParams: Record<string, string | number>): string {
  const attributes = Object.entries(workerParams)
    .map(([key, value]) => ` data-${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}="${String(value)}"`)
    .join('');
  return `<script src="/webpp.js"${attributes} async></script>`;
}

/** Writes (again) one replica's copy of the site: the paths it holds, redirects left out. */
export function writeSiteFolder(root: string, site: Site, replica: string, holds: (path: string) => boolean, scriptTag: string): void {
  rmSync(root, { recursive: true, force: true });
  mkdirSync(root, { recursive: true });
  for (const [path, file] of Object.entries(site)) {
    if (file.redirectTo !== undefined || !holds(path)) continue;
    let body = typeof file.body === 'function' ? file.body(replica) : file.body;
    if (typeof body === 'string' && file.contentType.startsWith('text/html')) body = body.replace('<!--webpp-->', scriptTag);
    const target = join(root, path);
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, body);
  }
}

/** A 1×1 PNG, for image resources. */
export const PIXEL_PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=',
  'base64',
);

/**
 * A small site: a page with a stylesheet, a script, `imageCount` images and a fetch() of
 * JSON; a second page; a text file for Range requests. `/whoami.txt` names the replica
 * that served it. `<!--webpp-->` in HTML becomes the cluster's page script tag.
 */
export function demoSite(imageCount = 4): Site {
  const images = Array.from({ length: imageCount }, (_, i) => `/img/${i + 1}.png`);
  const site: Site = {
    '/index.html': {
      contentType: 'text/html; charset=utf-8',
      body:
        `<!doctype html><html><head><meta charset="utf-8"><title>webpp test site</title>` +
        `<link rel="stylesheet" href="/style.css"></head><body><h1 id="title">Gallery</h1>` +
        images.map((src) => `<img src="${src}" alt="" width="1" height="1">`).join('') +
        `<p id="whoami"></p><script src="/app.js"></script><!--webpp--></body></html>`,
    },
    '/page2.html': {
      contentType: 'text/html; charset=utf-8',
      body:
        `<!doctype html><html><head><meta charset="utf-8"><title>page two</title>` +
        `<link rel="stylesheet" href="/style.css"></head><body><h1 id="title">Page two</h1><!--webpp--></body></html>`,
    },
    '/style.css': { contentType: 'text/css; charset=utf-8', body: 'h1 { color: rgb(10, 20, 30); }' },
    '/app.js': {
      contentType: 'text/javascript; charset=utf-8',
      body: `window.appLoaded = true;
fetch('/whoami.txt').then((r) => r.text()).then((t) => { document.getElementById('whoami').textContent = t; });`,
    },
    '/whoami.txt': { contentType: 'text/plain; charset=utf-8', body: (replica) => replica },
    '/data.json': { contentType: 'application/json', body: JSON.stringify({ items: [1, 2, 3] }) },
    '/big.txt': { contentType: 'text/plain; charset=utf-8', body: 'abcdefghijklmnopqrstuvwxyz'.repeat(40) },
  };
  for (const src of images) site[src] = { contentType: 'image/png', body: PIXEL_PNG };
  return site;
}
