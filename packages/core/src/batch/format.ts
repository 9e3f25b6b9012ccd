/**
 * Batch transmission (Web++ paper, Section 3.4): one streamed response carries a page and
 * every embedded resource the server holds that the client has not cached. This file holds
 * the wire constants and types; docs/batching.md is the full specification.
 *
 * Stream   = PREAMBLE, manifest frame, part frame (the page), part frame*, end frame
 * Frame    = type (u8) | metaLength (u32 BE) | bodyLength (u32 BE)
 *          | headCrc (u32 BE: CRC-32 of the 9 bytes before it)
 *          | meta (UTF-8 JSON, metaLength bytes) | metaCrc (u32 BE: CRC-32 of the meta)
 *          | body (bodyLength bytes) | bodyCrc (u32 BE: CRC-32 of the body)
 *
 * Every length is known before its bytes arrive, so a reader parses incrementally. A bad
 * headCrc means the lengths cannot be trusted: the stream is abandoned. A bad metaCrc or
 * bodyCrc spoils one part only: the reader reports that part as corrupt and carries on.
 */

/** Media type of a batch response. The version lives in the preamble. */
export const BATCH_MEDIA_TYPE = 'application/vnd.webpp.batch';

/**
 * Accept value by which the worker asks for a batch. Accept is a CORS-safelisted request
 * header (short, no unsafe bytes), so asking a cross-origin replica for a batch costs no
 * preflight; an origin without batching ignores it and answers plain HTML.
 */
export const BATCH_ACCEPT = `${BATCH_MEDIA_TYPE}, text/html;q=0.9, application/xhtml+xml;q=0.9, */*;q=0.8`;

/** Request header carrying the cache digest (see cache-digest.ts). Omitted when the cache is empty. */
export const CACHE_DIGEST_HEADER = 'webpp-cache-digest';

/** First bytes of every batch stream: the format name and version 1. */
export const BATCH_PREAMBLE: Uint8Array = Uint8Array.from('webpp-batch/1\n', (c) => c.charCodeAt(0));

export const FRAME_MANIFEST = 0x4d; // 'M'
export const FRAME_PART = 0x50; // 'P'
export const FRAME_END = 0x45; // 'E'

/** Bytes before a frame's meta: type, metaLength, bodyLength, headCrc. */
export const FRAME_HEAD_BYTES = 13;
/** Bytes of each checksum that follows the meta (metaCrc) and the body (bodyCrc). */
export const FRAME_CRC_BYTES = 4;

/** Default bound on one frame's meta: URLs and headers, never megabytes. */
export const DEFAULT_MAX_META_BYTES = 256 * 1024;
/** Default bound on one part's body accepted by a reader. */
export const DEFAULT_MAX_PART_BYTES = 32 * 1024 * 1024;
/** Default bound on the parts one manifest may announce. */
export const DEFAULT_MAX_PARTS = 1000;

/** What the batch will carry, sent before any part. */
export interface BatchManifest {
  /** Logical URL of the page; the first part carries it. */
  page: string;
  /** Logical URLs of the embedded resources that follow the page, in sending order. */
  parts: string[];
  /**
   * Embedded resources left out because the cache digest showed them cached, each with the
   * server's current validator, so that the client can tell a real hit from a digest false
   * positive (and treat a real hit as revalidated).
   */
  cached: Array<[url: string, validator: string]>;
}

/** Everything about a part except its body. Header names are lower case. */
export interface BatchPartMeta {
  /** Absolute logical URL of the resource, never a replica's physical URL. */
  url: string;
  /** HTTP status the resource would have been served with (2xx). */
  status: number;
  headers: Array<[name: string, value: string]>;
  /** Validator (the ETag) that the cache digest uses for this resource. */
  validator?: string;
}

export interface BatchPart extends BatchPartMeta {
  body: Uint8Array;
}

/** Last frame: its presence tells a complete batch from one cut at a frame boundary. */
export interface BatchEnd {
  /** Parts actually sent, the page included. */
  sentParts: number;
  /** Announced parts the server could not send after all; the client fetches them itself. */
  missing: string[];
}

export type BatchFrame =
  | { type: 'manifest'; manifest: BatchManifest }
  | { type: 'part'; part: BatchPart }
  /**
   * A part failed its checksum. `url` is set when only the body was damaged; a damaged meta
   * leaves the URL unknown, and the client treats every announced part that never arrived
   * as missing.
   */
  | { type: 'corrupt-part'; url?: string; reason: string }
  | { type: 'end'; end: BatchEnd };

export type BatchErrorCode =
  /** The stream does not start with BATCH_PREAMBLE. */
  | 'BAD_PREAMBLE'
  /** The stream ended, or was aborted, before the end frame. */
  | 'TRUNCATED'
  /** A frame head (or the manifest) failed its checksum: the rest cannot be trusted. */
  | 'CORRUPT'
  /** A meta or body exceeds the reader's bounds. */
  | 'TOO_LARGE'
  /** Well-checksummed but invalid: bad JSON, bad URL, frames out of order, bytes after the end. */
  | 'MALFORMED';

/** Why a batch stream was abandoned. Parts already yielded stay valid. */
export class BatchFormatError extends Error {
  override readonly name = 'BatchFormatError';
  constructor(
    readonly code: BatchErrorCode,
    message: string,
  ) {
    super(message);
  }
}

export interface BatchReadOptions {
  maxMetaBytes?: number;
  maxPartBytes?: number;
  maxParts?: number;
}
