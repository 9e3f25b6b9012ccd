/**
 * Reads one batch response (docs/batching.md) as it streams in: announces the embedded
 * resources to the pending map, hands the page over as soon as its part is complete, and
 * stores every later part in the logical-URL cache. Whatever happens to the stream, every
 * announced resource is settled, so that no request waits for a part that will never come.
 */
import { readBatch, type BatchPart } from '@webpp/core';
import type { LogicalCache } from './logical-cache.js';
import type { PendingParts } from './pending-parts.js';

export interface BatchSessionDeps {
  pending: PendingParts;
  cache: LogicalCache;
  /** The stream is abandoned when no byte arrives for this long. */
  idleTimeoutMs: number;
  maxPartBytes: number;
}

export interface BatchSessionResult {
  /** Embedded parts received intact. */
  received: number;
  /** Of those, stored in the logical cache. */
  stored: number;
  /** Resources the server left out because our digest listed them, and we hold that version. */
  confirmed: number;
  /** Left out as cached, but our copy differs (a digest false positive, or a race). */
  unconfirmed: number;
  /** Announced, but not delivered (missing, corrupt, stream cut): fetched individually. */
  fallbacks: number;
  /** Why the stream ended early, if it did. */
  failure: string | undefined;
}

export interface BatchSession {
  /** The page's part; rejects if the stream fails before it is complete, or it is corrupt. */
  page: Promise<BatchPart>;
  /** Settles when the stream is over and every part is stored. Never rejects. */
  done: Promise<BatchSessionResult>;
}

/** Reads chunks, failing when the server goes silent for `idleTimeoutMs`. */
async function* withIdleTimeout(body: ReadableStream<Uint8Array>, idleTimeoutMs: number): AsyncGenerator<Uint8Array> {
  const reader = body.getReader();
  let finished = false;
  try {
    for (;;) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const idle = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no data for ${idleTimeoutMs} ms`)), idleTimeoutMs);
      });
      const result = await Promise.race([reader.read(), idle]).finally(() => clearTimeout(timer));
      if (result.done) {
        finished = true;
        return;
      }
      yield result.value;
    }
  } finally {
    if (!finished) await reader.cancel().catch(() => undefined);
  }
}

export function startBatchSession(body: ReadableStream<Uint8Array>, deps: BatchSessionDeps): BatchSession {
  let resolvePage!: (part: BatchPart) => void;
  let rejectPage!: (error: Error) => void;
  const page = new Promise<BatchPart>((resolve, reject) => {
    resolvePage = resolve;
    rejectPage = reject;
  });
  // The caller may never look at `page` when it gave up already; that is no error.
  page.catch(() => undefined);

  const run = async (): Promise<BatchSessionResult> => {
    const result: BatchSessionResult = { received: 0, stored: 0, confirmed: 0, unconfirmed: 0, fallbacks: 0, failure: undefined };
    const expected = new Set<string>();
    const stores: Promise<void>[] = [];
    let pageSettled = false;
    const settlePage = (part: BatchPart | undefined, reason: string): void => {
      if (pageSettled) return;
      pageSettled = true;
      if (part) resolvePage(part);
      else rejectPage(new Error(reason));
    };
    const fail = (url: string, reason: string): void => {
      if (!expected.delete(url)) return;
      result.fallbacks += 1;
      deps.pending.fail(url, reason);
    };
    try {
      for await (const frame of readBatch(withIdleTimeout(body, deps.idleTimeoutMs), { maxPartBytes: deps.maxPartBytes })) {
        if (frame.type === 'manifest') {
          for (const url of frame.manifest.parts) {
            expected.add(url);
            deps.pending.expect(url);
          }
          for (const [url, validator] of frame.manifest.cached) {
            if (deps.cache.confirm(url, validator)) result.confirmed += 1;
            else result.unconfirmed += 1;
          }
        } else if (frame.type === 'part') {
          if (!pageSettled) {
            settlePage(frame.part, '');
            continue;
          }
          const part = frame.part;
          if (!expected.delete(part.url)) continue;
          result.received += 1;
          deps.pending.deliver(part);
          stores.push(
            deps.cache
              .store(part.url, part.status, new Headers(part.headers), part.body, true)
              .then((stored) => {
                if (stored) result.stored += 1;
              })
              .finally(() => deps.pending.release(part.url)),
          );
        } else if (frame.type === 'corrupt-part') {
          if (!pageSettled) settlePage(undefined, `the page's part is corrupt (${frame.reason})`);
          else if (frame.url !== undefined) fail(frame.url, `corrupt part (${frame.reason})`);
        } else {
          for (const url of frame.end.missing) fail(url, 'the server could not send it');
        }
      }
    } catch (error) {
      result.failure = error instanceof Error ? error.message : String(error);
    } finally {
      const reason = result.failure ?? 'announced but not sent';
      settlePage(undefined, `batch ended before the page: ${reason}`);
      for (const url of [...expected]) fail(url, reason);
    }
    await Promise.allSettled(stores);
    return result;
  };
  return { page, done: run() };
}
