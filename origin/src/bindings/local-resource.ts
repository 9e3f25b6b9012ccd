/**
 * Where this server keeps the bytes of a logical URL: its own path for it (from the
 * replication directory), and the file under a content root that path names. Shared by
 * content digests and binding sizes, which both describe bytes without reading a response.
 */
import { resolve, sep } from 'node:path';
import type { ReplicationDirectory } from '../directory/replication-directory.js';

/**
 * The path this server serves `logicalUrl` at: its own physical URL in the directory, or the
 * logical URL if it is here; undefined elsewhere or with a query.
 */
export function localPathOf(logicalUrl: string, publicUrl: string, directory: ReplicationDirectory): string | undefined {
  const match = directory.lookup(logicalUrl);
  const here = match?.physicalUrls.find((url) => url.startsWith(`${publicUrl}/`)) ?? (logicalUrl.startsWith(`${publicUrl}/`) ? logicalUrl : undefined);
  if (here === undefined) return undefined;
  const url = new URL(here);
  return url.search === '' ? url.pathname : undefined;
}

/** The file under `root` (already resolved) for a URL path, or undefined (outside the root, dotfiles, bad escapes). */
export function fileUnderRoot(root: string | undefined, path: string): string | undefined {
  if (root === undefined) return undefined;
  let decoded: string;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    return undefined;
  }
  if (decoded.includes('\0') || decoded.split('/').some((segment) => segment.startsWith('.'))) return undefined;
  const file = resolve(root, `.${decoded}`);
  return file.startsWith(root + sep) ? file : undefined;
}

/** The file the static route serves for a request URL (`/dir/` is its index.html), or undefined. */
export function staticFileOf(root: string | undefined, url: string): string | undefined {
  let path: string;
  try {
    path = new URL(url, 'http://webpp.invalid').pathname;
  } catch {
    return undefined;
  }
  return fileUnderRoot(root, path.endsWith('/') ? `${path}index.html` : path);
}
