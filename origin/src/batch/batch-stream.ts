/**
 * Writes one batch response as a stream (Web++ paper, Section 3.4: the page and "all
 * resources embedded in it in a single response"). The page goes out first and is flushed
 * through the compressor at once, so that the browser can start parsing it while the
 * embedded resources are still being read; each resource follows as soon as it is read.
 * Framing: @webpp/core batch format (docs/batching.md).
 */
import { PassThrough, type Readable } from 'node:stream';
import { constants as zlibConstants, createBrotliCompress, createGzip, type BrotliCompress, type Gzip } from 'node:zlib';
import {
  encodeBatchPreamble,
  encodeEndFrame,
  encodeManifestFrame,
  encodePartFrame,
  type BatchManifest,
  type BatchPartMeta,
} from '@webpp/core';
import type { BatchEncoding } from './negotiation.js';
import type { ResourceBody } from './resource-reader.js';

export interface PlannedPart {
  url: string;
  /** Fetches the part; undefined or a non-2xx status makes it `missing`. */
  read(): Promise<ResourceBody | undefined>;
}

export interface BatchPlan {
  manifest: BatchManifest;
  page: BatchPartMeta & { body: Uint8Array };
  parts: PlannedPart[];
}

export interface BatchStreamSettings {
  encoding: BatchEncoding;
  concurrency: number;
  maxPartBytes: number;
  maxBatchBytes: number;
}

interface BatchStreamResult {
  sentParts: number;
  missing: string[];
  bodyBytes: number;
}

export interface BatchStreamHooks {
  /** Called once the end frame is written (not when the stream was aborted). */
  onFinish?(result: BatchStreamResult): void;
  /** Called when producing the stream failed; the stream is destroyed (the client sees it cut). */
  onError?(error: unknown): void;
}

/** Brotli quality for streaming: fast enough to keep up with a LAN, most of the size gain. */
const BROTLI_STREAM_QUALITY = 4;
const GZIP_STREAM_LEVEL = 6;

function compressor(encoding: BatchEncoding): BrotliCompress | Gzip | undefined {
  if (encoding === 'br') {
    return createBrotliCompress({ params: { [zlibConstants.BROTLI_PARAM_QUALITY]: BROTLI_STREAM_QUALITY } });
  }
  if (encoding === 'gzip') return createGzip({ level: GZIP_STREAM_LEVEL });
  return undefined;
}

/**
 * Starts producing the batch and returns the readable side at once. Parts are read with
 * bounded concurrency and written in completion order; a part that cannot be read, is not
 * 2xx, is too large, or would overflow the batch is reported `missing` in the end frame.
 */
export function createBatchStream(plan: BatchPlan, settings: BatchStreamSettings, hooks: BatchStreamHooks = {}): Readable {
  const compress = compressor(settings.encoding);
  const sink: PassThrough | BrotliCompress | Gzip = compress ?? new PassThrough();
  let aborted = false;
  sink.once('close', () => {
    aborted = true;
  });

  const write = async (chunks: Uint8Array[]): Promise<void> => {
    for (const chunk of chunks) {
      if (aborted) return;
      if (!sink.write(chunk)) {
        await new Promise<void>((resolve) => {
          const done = (): void => {
            sink.off('drain', done);
            sink.off('close', done);
            resolve();
          };
          sink.on('drain', done);
          sink.on('close', done);
        });
      }
    }
    // Push what is written so far through the compressor: never hold a part back.
    if (compress !== undefined && !aborted) {
      await new Promise<void>((resolve) => {
        // A destroyed compressor never calls back: the client going away must not strand us.
        sink.once('close', resolve);
        compress.flush(() => {
          sink.off('close', resolve);
          resolve();
        });
      });
    }
  };

  const produce = async (): Promise<BatchStreamResult> => {
    await write([encodeBatchPreamble(), ...encodeManifestFrame(plan.manifest), ...encodePartFrame(plan.page, plan.page.body)]);
    const missing: string[] = [];
    let sentParts = 1;
    let bodyBytes = plan.page.body.byteLength;
    let next = 0;
    // Writes are serialised so that frames never interleave.
    let writing: Promise<void> = Promise.resolve();
    const worker = async (): Promise<void> => {
      while (next < plan.parts.length && !aborted) {
        const part = plan.parts[next++] as PlannedPart;
        if (bodyBytes >= settings.maxBatchBytes) {
          missing.push(part.url);
          continue;
        }
        let resource: ResourceBody | undefined;
        try {
          resource = await part.read();
        } catch {
          resource = undefined;
        }
        const usable =
          resource !== undefined &&
          resource.status >= 200 &&
          resource.status <= 299 &&
          resource.body.byteLength <= settings.maxPartBytes &&
          bodyBytes + resource.body.byteLength <= settings.maxBatchBytes;
        if (!usable || resource === undefined) {
          missing.push(part.url);
          continue;
        }
        bodyBytes += resource.body.byteLength;
        const meta: BatchPartMeta = { url: part.url, status: resource.status, headers: resource.headers };
        if (resource.validator !== undefined) meta.validator = resource.validator;
        const frame = encodePartFrame(meta, resource.body);
        writing = writing.then(() => write(frame));
        await writing;
        sentParts += 1;
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, settings.concurrency) }, worker));
    await writing;
    await write(encodeEndFrame({ sentParts, missing }));
    return { sentParts, missing, bodyBytes };
  };

  produce().then(
    (result) => {
      if (aborted) return;
      sink.end();
      hooks.onFinish?.(result);
    },
    (error: unknown) => {
      hooks.onError?.(error);
      sink.destroy(error instanceof Error ? error : new Error(String(error)));
    },
  );
  return sink;
}
