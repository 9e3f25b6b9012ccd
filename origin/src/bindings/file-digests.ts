/**
 * SHA-256 digests of files (`sha256-<base64>`, the form of docs/protocol.md's "Content
 * digests"), hashed once per version — a version is the file's (size, mtime) — and re-checked
 * with a stat at most once per `revalidateMs`, bounded in entries. One instance per server is
 * the one view of "the file as it is now" that both the digests a bindings header announces
 * (content-digests.ts) and the memory cache's static copies (cache/cache-plugin.ts) follow,
 * so that a copy kept in memory is never served under another version's digest (issue 25 §2).
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';

export interface FileDigestsOptions {
  /** Most file digests cached. Default 10 000. */
  maxEntries?: number;
  /** Files larger than this are not hashed. Default 128 MiB. */
  maxFileBytes?: number;
  /** A cached file digest is trusted without a new stat for this long. Default 1 000 ms. */
  revalidateMs?: number;
  now?: () => number;
}

interface FileEntry {
  sizeBytes: number;
  mtimeMs: number;
  checkedAtMs: number;
  integrity: Promise<string | undefined>;
}

export class FileDigests {
  private readonly files = new Map<string, FileEntry>();
  private readonly maxEntries: number;
  private readonly maxFileBytes: number;
  private readonly revalidateMs: number;
  private readonly now: () => number;

  constructor(options: FileDigestsOptions = {}) {
    this.maxEntries = options.maxEntries ?? 10_000;
    this.maxFileBytes = options.maxFileBytes ?? 128 * 1024 * 1024;
    this.revalidateMs = options.revalidateMs ?? 1_000;
    this.now = options.now ?? Date.now;
  }

  /** The digest of the file as it is now (within revalidateMs), or undefined (no such file, too large, changing). */
  async digestOf(file: string): Promise<string | undefined> {
    const nowMs = this.now();
    const cached = this.files.get(file);
    if (cached !== undefined && nowMs - cached.checkedAtMs < this.revalidateMs) return cached.integrity;
    const info = await stat(file).catch(() => undefined);
    if (info === undefined || !info.isFile() || info.size > this.maxFileBytes) {
      this.files.delete(file);
      return undefined;
    }
    if (cached !== undefined && cached.sizeBytes === info.size && cached.mtimeMs === info.mtimeMs) {
      cached.checkedAtMs = nowMs;
      return cached.integrity;
    }
    const entry: FileEntry = { sizeBytes: info.size, mtimeMs: info.mtimeMs, checkedAtMs: nowMs, integrity: hashFile(file) };
    this.files.delete(file);
    this.files.set(file, entry);
    while (this.files.size > this.maxEntries) this.files.delete(this.files.keys().next().value as string);
    const integrity = await entry.integrity;
    // Written while it was read: hash it again next time.
    const after = await stat(file).catch(() => undefined);
    if (after === undefined || after.size !== info.size || after.mtimeMs !== info.mtimeMs) {
      this.files.delete(file);
      return undefined;
    }
    return integrity;
  }
}

/** The digest of bytes held in memory, in the same form. */
export function bytesDigest(body: Buffer): string {
  return `sha256-${createHash('sha256').update(body).digest('base64')}`;
}

function hashFile(file: string): Promise<string | undefined> {
  return new Promise((done) => {
    const hash = createHash('sha256');
    createReadStream(file)
      .on('data', (chunk) => hash.update(chunk))
      .on('error', () => done(undefined))
      .on('end', () => done(`sha256-${hash.digest('base64')}`));
  });
}
