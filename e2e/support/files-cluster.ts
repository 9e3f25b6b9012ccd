/**
 * The set-up the engine's specs on emulated links share (sw-late-binding, sw-head-redecision):
 * an own origin `o` that serves the page alone over a link without delay, replicas behind
 * netem links that hold the files, a page whose links make the origin send the files'
 * bindings with it, and a controlled page whose worker has learned them.
 */
import type { Page } from '@playwright/test';
import type { LinkProfile } from '@webpp/netem';
import { Cluster, type Site } from './cluster/index.js';
import type { DirectoryEntrySeed } from './cluster/options.js';
import type { RequestLogEntry } from './cluster/request-log.js';
import { openControlled, waitForState } from './webpp-page.js';

/** Bytes that no encoding shrinks, the same for a seed. */
export function noise(sizeBytes: number, seed: number): Buffer {
  const bytes = Buffer.alloc(sizeBytes);
  let state = seed >>> 0;
  for (let i = 0; i < sizeBytes; i++) {
    state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0;
    bytes[i] = state >>> 24;
  }
  return bytes;
}

/** A site whose /index.html links `paths`: the origin binds what a page references, so their bindings come with the page. */
export function linkingSite(title: string, paths: readonly string[]): Site {
  return {
    '/index.html': {
      contentType: 'text/html; charset=utf-8',
      body:
        `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title></head><body><h1 id="title">Files</h1>` +
        paths.map((href) => `<a href="${href}">${href}</a>`).join(' ') +
        `<!--webpp--></body></html>`,
    },
  };
}

export interface FilesClusterOptions {
  /** With /index.html (linkingSite). */
  site: Site;
  /** Each replica's link, by name (the own origin `o` has no delay). */
  links: Record<string, LinkProfile>;
  /** The paths of `site` each replica holds (`o` holds /index.html). */
  holds: Record<string, string[]>;
  /** The directory's entries for the files; the rest (`/*`) is bound to `o`. */
  entries: (origins: Record<string, string>) => DirectoryEntrySeed[];
  /** Worker options on the page's script tag. */
  workerParams?: Record<string, string | number>;
  /** Bodies stored through the management API before the page opens (application/octet-stream), on the named replicas: the same strong ETag (their digest) on each. */
  stored?: { path: string; body: Buffer; on: string[] }[];
}

/** Starts the cluster and opens /index.html in `page`, controlled, once its worker has the files' bindings. Stops the cluster if that fails. */
export async function startFilesCluster(page: Page, options: FilesClusterOptions): Promise<Cluster> {
  const cluster = await Cluster.start({
    site: options.site,
    names: ['o', ...Object.keys(options.links)],
    links: { o: { delayMs: 0 }, ...options.links },
    holds: { o: ['/index.html'], ...options.holds },
    entries: (origins) => [...options.entries(origins), { logical: '/*', servers: [origins['o'] as string] }],
    ...(options.workerParams ? { workerParams: options.workerParams } : {}),
  });
  try {
    for (const { path, body, on } of options.stored ?? []) await cluster.storeReplica(path, body, 'application/octet-stream', on);
    await openControlled(page, cluster.logicalUrl('/index.html'));
    await waitForState(page, (state) => state.bindings.count > 0, {
      what: 'bindings learned',
      between: async () => void (await page.evaluate(() => fetch('/index.html', { cache: 'no-store' }).then((response) => response.text()))),
    });
  } catch (error) {
    await cluster.stop();
    throw error;
  }
  return cluster;
}

/** Forgets what the named replicas were asked so far. */
export function clearLogs(cluster: Cluster, names: readonly string[]): void {
  for (const name of names) cluster.replica(name).clearLog();
}

/** A page's request as a replica got it: a whole GET (background refreshes are HEADs or ranged GETs). */
export function isWholeGet(entry: RequestLogEntry): boolean {
  return entry.method === 'GET' && entry.headers['range'] === undefined;
}
