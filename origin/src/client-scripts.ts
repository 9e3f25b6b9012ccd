/**
 * Serving the client: the page script (/webpp.js), which registers the Service Worker,
 * and the worker itself (/webpp-sw.js) — the modern counterpart of the paper's signed
 * applet that "servers embed a reference to" (Section 2). The files come from the
 * @webpp/sw package's bundle/ folder (`npm run build -w @webpp/sw`). They are read from
 * disk when they change (mtime + size), so a rebuild is picked up without a restart, and
 * served with `Cache-Control: no-cache` (browsers revalidate worker scripts anyway) and
 * `Service-Worker-Allowed: /`, so that a worker script at any path may control the site.
 */
import { existsSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const PAGE_SCRIPT_FILE = 'webpp.js';
export const WORKER_SCRIPT_FILE = 'webpp-sw.js';
/**
 * The worker's opt-in add-ons (@webpp/sw src/addons.ts), served beside the worker script:
 * the worker imports one at start-up when the site's options ask for it.
 */
export const WORKER_ADDON_FILES = ['webpp-sw-batch.js', 'webpp-sw-offline.js', 'webpp-sw-policies.js', 'webpp-sw-integrity.js', 'webpp-sw-aggregate.js'] as const;

/** Where an add-on is served: the folder of the worker script's path. */
export function workerAddonPath(workerPath: string, file: string): string {
  return `${workerPath.slice(0, workerPath.lastIndexOf('/') + 1)}${file}`;
}

interface CachedFile {
  mtimeMs: number;
  size: number;
  body: Buffer;
  etag: string;
}

export type ClientFileResult =
  | { ok: true; body: Buffer; etag: string }
  | { ok: false; message: string };

/**
 * Where the bundle may be: the explicit option, $WEBPP_SW_BUNDLE_DIR, the @webpp/sw package
 * found by walking up node_modules folders from this module, then the monorepo sibling
 * sw/bundle. The first that exists wins.
 */
function clientBundleCandidates(explicitDir: string | undefined): string[] {
  if (explicitDir !== undefined) return [resolve(explicitDir)];
  const candidates: string[] = [];
  const fromEnv = process.env.WEBPP_SW_BUNDLE_DIR;
  if (fromEnv !== undefined && fromEnv !== '') candidates.push(resolve(fromEnv));
  const here = dirname(fileURLToPath(import.meta.url));
  for (let folder = here; ; folder = dirname(folder)) {
    candidates.push(join(folder, 'node_modules', '@webpp', 'sw', 'bundle'));
    if (dirname(folder) === folder) break;
  }
  // origin/src or origin/dist inside the webpp repository.
  candidates.push(resolve(here, '..', '..', 'sw', 'bundle'));
  return candidates;
}

export class ClientScripts {
  private readonly cache = new Map<string, CachedFile>();
  private readonly candidates: string[];

  constructor(explicitDir: string | undefined) {
    this.candidates = clientBundleCandidates(explicitDir);
  }

  /** The folder in use, or undefined when no candidate holds the bundle. */
  bundleDir(file: string = WORKER_SCRIPT_FILE): string | undefined {
    return this.candidates.find((folder) => existsSync(join(folder, file)));
  }

  async read(file: string): Promise<ClientFileResult> {
    const folder = this.bundleDir(file);
    if (folder === undefined) {
      return {
        ok: false,
        message:
          `The webpp client bundle (${file}) is missing. Build it with "npm run build -w @webpp/sw" ` +
          `(or set clientBundleDir / WEBPP_SW_BUNDLE_DIR). Looked in: ${this.candidates.join(', ')}`,
      };
    }
    const path = join(folder, file);
    try {
      const info = await stat(path);
      const cached = this.cache.get(path);
      if (cached !== undefined && cached.mtimeMs === info.mtimeMs && cached.size === info.size) {
        return { ok: true, body: cached.body, etag: cached.etag };
      }
      const body = await readFile(path);
      const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
      this.cache.set(path, { mtimeMs: info.mtimeMs, size: info.size, body, etag });
      return { ok: true, body, etag };
    } catch (error) {
      return { ok: false, message: `Cannot read ${path}: ${(error as Error).message}` };
    }
  }
}
