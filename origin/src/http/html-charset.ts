/**
 * The character encoding an HTML file declares for itself. @fastify/static labels every
 * .html file `text/html; charset=utf-8`, and a charset in the header wins over the page's
 * own `<meta charset>` (HTML Living Standard, "Determining the character encoding": the
 * transport layer comes before the prescan), so an ISO-8859-1 or Shift_JIS page copied into
 * the folder showed "Caf�". The served header is corrected to the encoding the page
 * declares in its first 1024 bytes — the bytes the standard's prescan reads — with
 * `<meta charset=…>` or `<meta http-equiv="Content-Type" content="…; charset=…">`.
 *
 * A page starting with a byte order mark keeps UTF-8 in the header only for the UTF-8 mark
 * (the mark wins over the header in browsers); a page that declares nothing, or declares
 * UTF-8, keeps the header as it was.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { LRUCache } from 'lru-cache';

/** The standard's prescan reads the first 1024 bytes. */
const PRESCAN_BYTES = 1024;
const META_CHARSET = /<meta\s[^>]*?charset\s*=\s*["']?\s*([A-Za-z0-9._:-]+)/i;
const UTF8_LABELS = new Set(['utf-8', 'utf8', 'unicode-1-1-utf-8', 'unicode11utf8', 'unicode20utf8', 'x-unicode20utf8']);

/** The non-UTF-8 encoding label the bytes declare, or undefined. */
function declaredCharset(head: Buffer): string | undefined {
  if (head.length >= 2 && ((head[0] === 0xfe && head[1] === 0xff) || (head[0] === 0xff && head[1] === 0xfe))) return head[0] === 0xfe ? 'utf-16be' : 'utf-16le';
  if (head.length >= 3 && head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf) return undefined;
  const label = META_CHARSET.exec(head.subarray(0, PRESCAN_BYTES).toString('latin1'))?.[1]?.toLowerCase();
  return label === undefined || UTF8_LABELS.has(label) ? undefined : label;
}

interface CachedCharset {
  sizeBytes: number;
  mtimeMs: number;
  charset: string | undefined;
}

/** Remembers the declared charset of files by (size, mtime), so each page is read once. */
export class HtmlCharsets {
  private readonly files = new LRUCache<string, CachedCharset>({ max: 10_000 });

  /** The charset `file` (an HTML file of this size and mtime) declares, or undefined. */
  of(file: string, sizeBytes: number, mtimeMs: number): string | undefined {
    const cached = this.files.get(file);
    if (cached !== undefined && cached.sizeBytes === sizeBytes && cached.mtimeMs === mtimeMs) return cached.charset;
    const charset = declaredCharset(readHead(file));
    this.files.set(file, { sizeBytes, mtimeMs, charset });
    return charset;
  }
}

function readHead(file: string): Buffer {
  const head = Buffer.alloc(PRESCAN_BYTES);
  let fd: number | undefined;
  try {
    fd = openSync(file, 'r');
    return head.subarray(0, readSync(fd, head, 0, PRESCAN_BYTES, 0));
  } catch {
    return Buffer.alloc(0); // gone or unreadable: the static route answers for it
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
