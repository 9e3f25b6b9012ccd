/**
 * The static bindings file (docs/protocol.md, "Static bindings file"; docs/static-hosting.md).
 * A site on a host that sets no response headers (GitHub Pages, plain S3) cannot send the
 * bindings header; `webpp-origin build` writes the same bindings to STATIC_BINDINGS_PATH
 * instead, one header value per line. When a page of the own origin arrives without a
 * bindings header, the worker reads that file: once per worker start, and again when its
 * copy is older than `staleAfterMs`, revalidating with the validators it kept (ETag,
 * Last-Modified). The file comes from the own origin, so its bindings are trusted.
 *
 * Fails open: a missing, broken, slow or huge file changes nothing. A 404 (or 410) is
 * remembered for `missingRetryMs`, across worker restarts, so that a site without the file
 * (every site served by webpp-origin) costs one request now and then, not one per page.
 */
import { STATIC_BINDINGS_PATH } from '@webpp/core';
import type { KeyValueStore } from './storage.js';

const STATIC_BINDINGS_KEY = 'static-bindings';
const DEFAULT_STALE_AFTER_MS = 5 * 60_000;
const DEFAULT_MISSING_RETRY_MS = 10 * 60_000;
const DEFAULT_TIMEOUT_MS = 3_000;
const DEFAULT_MAX_BYTES = 4 * 1024 * 1024;

interface StoredCopy {
  lines: string[];
  etag?: string;
  lastModified?: string;
  /** Set when the file was missing: not asked again before then. */
  missingUntilMs?: number;
}

export interface StaticBindingsOptions {
  selfOrigin: string;
  storage: KeyValueStore;
  fetch: (request: Request) => Promise<Response>;
  now?: () => number;
  staleAfterMs?: number;
  missingRetryMs?: number;
  timeoutMs?: number;
  maxBytes?: number;
}

/** What one check did (for the worker's events and for tests). */
export type StaticBindingsOutcome = 'fresh' | 'fetched' | 'revalidated' | 'missing' | 'remembered-missing' | 'failed';

export class StaticBindings {
  private checkedAtMs: number | undefined;
  private running: Promise<StaticBindingsOutcome> | undefined;
  private readonly now: () => number;
  readonly url: string;

  constructor(private readonly options: StaticBindingsOptions) {
    this.now = options.now ?? Date.now;
    this.url = `${options.selfOrigin}${STATIC_BINDINGS_PATH}`;
  }

  /**
   * Called when a page of the own origin came without a bindings header: reads (or
   * revalidates) the file unless that was done less than `staleAfterMs` ago, and hands each
   * line to `apply`. Never rejects; concurrent calls share one request.
   */
  whenHeaderMissing(apply: (value: string) => void): Promise<StaticBindingsOutcome> {
    if (this.running) return this.running;
    if (this.checkedAtMs !== undefined && this.now() - this.checkedAtMs < (this.options.staleAfterMs ?? DEFAULT_STALE_AFTER_MS)) {
      return Promise.resolve('fresh');
    }
    this.running = this.check(apply).finally(() => {
      this.checkedAtMs = this.now();
      this.running = undefined;
    });
    return this.running;
  }

  private async check(apply: (value: string) => void): Promise<StaticBindingsOutcome> {
    try {
      const stored = await this.read();
      if (stored?.missingUntilMs !== undefined && stored.missingUntilMs > this.now()) return 'remembered-missing';
      const headers = new Headers();
      if (stored?.etag !== undefined) headers.set('if-none-match', stored.etag);
      if (stored?.lastModified !== undefined) headers.set('if-modified-since', stored.lastModified);
      // no-store: the validators are ours, so the browser's cache neither adds nor answers them.
      const response = await this.options.fetch(
        new Request(this.url, { headers, cache: 'no-store', credentials: 'same-origin', redirect: 'error', signal: AbortSignal.timeout(this.options.timeoutMs ?? DEFAULT_TIMEOUT_MS) }),
      );
      if (response.status === 304 && stored !== undefined && stored.missingUntilMs === undefined) {
        for (const line of stored.lines) apply(line);
        return 'revalidated';
      }
      if (response.status === 404 || response.status === 410) {
        await response.body?.cancel();
        await this.options.storage.set(STATIC_BINDINGS_KEY, { lines: [], missingUntilMs: this.now() + (this.options.missingRetryMs ?? DEFAULT_MISSING_RETRY_MS) } satisfies StoredCopy);
        return 'missing';
      }
      if (response.status !== 200) {
        await response.body?.cancel();
        return 'failed';
      }
      const lines = parseLines(await this.boundedText(response));
      if (lines === undefined) return 'failed';
      for (const line of lines) apply(line);
      const copy: StoredCopy = { lines };
      const etag = response.headers.get('etag');
      const lastModified = response.headers.get('last-modified');
      if (etag !== null) copy.etag = etag;
      if (lastModified !== null) copy.lastModified = lastModified;
      await this.options.storage.set(STATIC_BINDINGS_KEY, copy);
      return 'fetched';
    } catch {
      return 'failed';
    }
  }

  private async read(): Promise<StoredCopy | undefined> {
    const value = (await this.options.storage.get(STATIC_BINDINGS_KEY)) as StoredCopy | undefined;
    if (typeof value !== 'object' || value === null || !Array.isArray(value.lines)) return undefined;
    return value;
  }

  /** The body as text, or undefined when it is larger than maxBytes. */
  private async boundedText(response: Response): Promise<string | undefined> {
    const maxBytes = this.options.maxBytes ?? DEFAULT_MAX_BYTES;
    const declared = Number(response.headers.get('content-length') ?? '0');
    if (declared > maxBytes) {
      await response.body?.cancel();
      return undefined;
    }
    const text = await response.text();
    return text.length > maxBytes ? undefined : text;
  }
}

/** The header values of the file: non-empty lines that are not `#` comments. */
function parseLines(text: string | undefined): string[] | undefined {
  if (text === undefined) return undefined;
  return text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
}
