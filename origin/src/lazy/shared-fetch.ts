/**
 * One lazy fetch of one resource, shared by every request that arrives while it runs
 * (issue 14: "concurrent first requests share one fetch"). It asks the holders in turn;
 * the first 200 fixes the entity (ETag, version, length); every reader gets the bytes
 * received so far, then the rest as they arrive (stream-through). When a holder fails
 * mid-body, the fetch resumes from the next holder with `Range: bytes=<received>-` and
 * `If-Range: <etag>`, so readers see one unbroken body; only when no holder can continue
 * the same entity are the readers' streams cut (a worker resumes or fails over then).
 */
import { PassThrough, type Readable } from 'node:stream';
import { LOGICAL_URL_HEADER } from '../replicas/replica-manager.js';
import { parseVersion, REPLICA_VERSION_HEADER, type ReplicaVersion } from '../replicas/replica-version.js';
import type { SignedStreamResponse } from '../sync/cluster-client.js';

/** The entity being fetched, as the first holder that answered described it. */
export interface FetchedHead {
  contentType: string;
  etag: string;
  version: ReplicaVersion;
  logicalUrl: string | undefined;
  sizeBytes: number;
}

/** Opens the holder's content; resolves with its response (any status), rejects on network errors. */
export type OpenHolder = (holderUrl: string, headers: Record<string, string>) => Promise<SignedStreamResponse>;

function headOf(response: SignedStreamResponse): FetchedHead | undefined {
  const etag = response.headers.etag;
  const version = parseVersion(response.headers[REPLICA_VERSION_HEADER] as string | undefined);
  const sizeBytes = Number(response.headers['content-length']);
  if (etag === undefined || version === undefined || !Number.isSafeInteger(sizeBytes) || sizeBytes < 0) return undefined;
  const logical = response.headers[LOGICAL_URL_HEADER];
  return {
    contentType: response.headers['content-type'] ?? 'application/octet-stream',
    etag,
    version,
    logicalUrl: typeof logical === 'string' ? logical : undefined,
    sizeBytes,
  };
}

export class SharedFetch {
  private readonly chunks: Buffer[] = [];
  private receivedBytes = 0;
  private readonly readers = new Set<PassThrough>();
  private entity: FetchedHead | undefined;
  private failure: Error | undefined;
  private finished = false;
  /** Resolves with the head once a holder answered 200, rejects when none did. */
  readonly head: Promise<FetchedHead>;
  /** Resolves with the whole body, rejects when it could not be completed. */
  readonly body: Promise<Buffer>;
  /** Holders that answered, in order (for stats and tests). */
  readonly sources: string[] = [];

  constructor(holders: readonly string[], open: OpenHolder, maxBytes: number) {
    let resolveHead!: (head: FetchedHead) => void;
    let rejectHead!: (error: Error) => void;
    this.head = new Promise((resolve, reject) => {
      resolveHead = resolve;
      rejectHead = reject;
    });
    this.head.catch(() => undefined);
    this.body = this.run(holders, open, maxBytes, resolveHead).then(
      (body) => {
        this.finished = true;
        for (const reader of this.readers) reader.end();
        this.readers.clear();
        return body;
      },
      (error: unknown) => {
        this.failure = error as Error;
        rejectHead(this.failure);
        for (const reader of this.readers) reader.destroy(this.failure);
        this.readers.clear();
        throw this.failure;
      },
    );
    this.body.catch(() => undefined);
  }

  /** A stream of the whole body: what arrived so far, then the rest. Call after `head` resolved. */
  reader(): Readable {
    const reader = new PassThrough();
    for (const chunk of this.chunks) reader.write(chunk);
    if (this.finished) reader.end();
    else if (this.failure !== undefined) reader.destroy(this.failure);
    else {
      this.readers.add(reader);
      reader.once('close', () => this.readers.delete(reader));
    }
    return reader;
  }

  private async run(holders: readonly string[], open: OpenHolder, maxBytes: number, resolveHead: (head: FetchedHead) => void): Promise<Buffer> {
    const errors: string[] = [];
    for (const holder of holders) {
      const entity = this.entity;
      const resuming = entity !== undefined && this.receivedBytes > 0;
      let response: SignedStreamResponse;
      try {
        response = await open(holder, resuming ? { range: `bytes=${this.receivedBytes}-`, 'if-range': entity.etag } : {});
      } catch (error) {
        errors.push(`${holder}: ${(error as Error).message}`);
        continue;
      }
      const head = headOf(response);
      const usable =
        head !== undefined &&
        (entity === undefined
          ? response.statusCode === 200 && head.sizeBytes <= maxBytes
          : head.etag === entity.etag &&
            ((resuming && response.statusCode === 206 && response.headers['content-range']?.startsWith(`bytes ${this.receivedBytes}-`) === true) ||
              (!resuming && response.statusCode === 200)));
      if (!usable) {
        errors.push(`${holder}: ${response.statusCode}${head === undefined ? ' without content headers' : ''}`);
        response.body.resume();
        continue;
      }
      this.sources.push(holder);
      if (entity === undefined) {
        this.entity = { ...head, sizeBytes: head.sizeBytes };
        resolveHead(this.entity);
      }
      const total = this.entity?.sizeBytes ?? 0;
      try {
        for await (const chunk of response.body as AsyncIterable<Buffer>) {
          if (this.receivedBytes + chunk.byteLength > total) throw new Error(`${holder} sent more than ${total} bytes`);
          this.chunks.push(chunk);
          this.receivedBytes += chunk.byteLength;
          for (const reader of this.readers) reader.write(chunk);
        }
      } catch (error) {
        errors.push(`${holder}: cut after ${this.receivedBytes} bytes (${(error as Error).message})`);
        continue;
      }
      if (this.receivedBytes === total) return Buffer.concat(this.chunks, total);
      errors.push(`${holder}: ended after ${this.receivedBytes} of ${total} bytes`);
    }
    throw new Error(`no holder could give the content (${errors.join('; ') || 'no holders'})`);
  }
}
