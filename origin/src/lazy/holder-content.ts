/**
 * The bytes this server holds for one of its paths, as a holder gives them to a co-op that
 * fetches a replica lazily (issue 14): the stored replica (replica store), else the static
 * file under `contentRoot`. Raw bytes, never a transformed page (no injected script), with
 * a version and a strong ETag that is the content digest in the replica store's form, so
 * the co-op's stored copy later carries the same ETag as the holder's.
 *
 * A static file has no replica version: it gets (mtime, this server), so that a file changed
 * on disk is newer than the copy a co-op took of it, and a PUT (versions ≥ now) newer still.
 */
import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { fileUnderRoot } from '../bindings/local-resource.js';
import { replicaEtag, type ReplicaStore } from '../replicas/replica-store.js';
import type { ReplicaVersion } from '../replicas/replica-version.js';

export interface HolderContent {
  content: Buffer;
  contentType: string;
  version: ReplicaVersion;
  /** Strong ETag: `"sha256-<base64url digest>"`. */
  etag: string;
}

/** Content types of static files by extension (the holder's file server decides for browsers; this is for the copy). */
const TYPES: Record<string, string> = {
  html: 'text/html; charset=utf-8',
  htm: 'text/html; charset=utf-8',
  css: 'text/css; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  mjs: 'text/javascript; charset=utf-8',
  json: 'application/json',
  svg: 'image/svg+xml',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  avif: 'image/avif',
  ico: 'image/x-icon',
  woff2: 'font/woff2',
  woff: 'font/woff',
  txt: 'text/plain; charset=utf-8',
  wasm: 'application/wasm',
  mp4: 'video/mp4',
  pdf: 'application/pdf',
};

function contentTypeOf(path: string): string {
  const extension = /\.([a-z0-9]+)$/i.exec(path)?.[1]?.toLowerCase() ?? '';
  return TYPES[extension] ?? 'application/octet-stream';
}

export interface HolderContentSource {
  store: ReplicaStore;
  /** Folder of the static files (resolved), or undefined. */
  contentRoot: string | undefined;
  publicUrl: string;
  maxBytes: number;
}

/** What this server holds at `path`, or undefined (nothing, or larger than maxBytes). */
export async function readHolderContent(source: HolderContentSource, path: string): Promise<HolderContent | undefined> {
  const replica = source.store.get(path);
  if (replica !== undefined) {
    const release = source.store.hold(replica);
    try {
      const content = await source.store.readAll(replica);
      return { content, contentType: replica.contentType, version: replica.version, etag: replicaEtag(replica) };
    } finally {
      release();
    }
  }
  const file = fileUnderRoot(source.contentRoot, path);
  if (file === undefined) return undefined;
  const info = await stat(file).catch(() => undefined);
  if (info === undefined || !info.isFile() || info.size > source.maxBytes) return undefined;
  const content = await readFile(file);
  const digest = createHash('sha256').update(content).digest('hex');
  return {
    content,
    contentType: contentTypeOf(path),
    version: { timeMs: Math.floor(info.mtimeMs), writer: source.publicUrl },
    etag: `"sha256-${Buffer.from(digest, 'hex').toString('base64url')}"`,
  };
}
