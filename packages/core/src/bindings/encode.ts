import { deflateSync, strToU8 } from 'fflate';
import { encodeBase64Url } from '../_private/base64url.js';
import { canonicalHttpUrl } from '../_private/whatwg-url.js';
import type { Binding, BindingsDocument, ContentDigest, EncodeOptions, EncodeResult } from '../types.js';
import {
  BINDINGS_FORMAT_VERSION,
  isSha256Integrity,
  DEFAULT_MAX_HEADER_BYTES,
  FLAG_PREFIX,
  MAX_VALIDATOR_LENGTH,
  VALIDATOR_PATTERN,
  type WireDigest,
  type WireDocument,
  type WireReplica,
  type WireRow,
  type WireSize,
} from './format.js';

/** Smallest maxBytes accepted: room for the envelope of an empty document. */
export const MIN_HEADER_BYTES = 64;

interface SplitUrl {
  origin: string;
  path: string;
}

interface PreparedBinding {
  logical: SplitUrl;
  replicas: SplitUrl[];
  prefix: boolean;
  validator: string | undefined;
  sizeBytes: number | undefined;
}

interface PreparedDigest {
  logical: SplitUrl;
  /** The same URL as one string, to test which kept binding covers it. */
  href: string;
  integrity: string;
}

/**
 * Encodes a bindings document as one header value (docs/protocol.md). Bindings are kept in
 * document order; when the value would exceed `maxBytes`, bindings are dropped from the end
 * (so put the page's own binding and prefix bindings first) and counted in droppedBindings.
 * Digests come second: only those of URLs a kept binding covers are sent, and when they do
 * not all fit they too are dropped from the end (droppedDigests). A binding is never dropped
 * to make room for a digest.
 * @throws TypeError for an invalid document (naming the binding), RangeError for bad options.
 */
export function encodeBindings(document: BindingsDocument, options: EncodeOptions = {}): EncodeResult {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_HEADER_BYTES;
  const compression = options.compression ?? 'auto';
  if (!Number.isInteger(maxBytes) || maxBytes < MIN_HEADER_BYTES) {
    throw new RangeError(`EncodeOptions.maxBytes must be an integer >= ${MIN_HEADER_BYTES} (got ${maxBytes})`);
  }
  if (compression !== 'auto' && compression !== 'never' && compression !== 'always') {
    throw new RangeError(`EncodeOptions.compression must be 'auto', 'never' or 'always' (got ${String(compression)})`);
  }
  const prepared = prepareDocument(document);
  const digests = prepareDigests(document.digests);
  const version = document.directoryVersion;

  const keptBindings = longestFitting(prepared.length, maxBytes, (count) => envelope(version, prepared.slice(0, count), [], compression));
  const bindings = prepared.slice(0, keptBindings.count);
  const covered = digests.filter((digest) => bindings.some((binding) => covers(binding, digest.href)));
  const keptDigests =
    covered.length === 0
      ? { count: 0, value: keptBindings.value }
      : longestFitting(covered.length, maxBytes, (count) => envelope(version, bindings, covered.slice(0, count), compression), keptBindings.value);
  return {
    ...keptDigests.value,
    droppedBindings: prepared.length - keptBindings.count,
    droppedDigests: digests.length - keptDigests.count,
  };
}

type Envelope = { value: string; compressed: boolean };

/**
 * The largest count in [0, total] whose encoding fits maxBytes (binary search: the encoded
 * length grows with the count), with its encoding. `atZero` is the encoding of count 0 when
 * the caller already has it.
 */
function longestFitting(total: number, maxBytes: number, encodeFirst: (count: number) => Envelope, atZero?: Envelope): { count: number; value: Envelope } {
  const all = encodeFirst(total);
  if (all.value.length <= maxBytes) return { count: total, value: all };
  let best = atZero ?? encodeFirst(0);
  let kept = 0;
  let low = 1;
  let high = total - 1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    const candidate = encodeFirst(middle);
    if (candidate.value.length <= maxBytes) {
      best = candidate;
      kept = middle;
      low = middle + 1;
    } else {
      high = middle - 1;
    }
  }
  return { count: kept, value: best };
}

/** True when the binding applies to the logical URL `href` (the same URL, or below a prefix). */
function covers(binding: PreparedBinding, href: string): boolean {
  const logical = binding.logical.origin + binding.logical.path;
  return binding.prefix ? href.startsWith(logical) : href === logical;
}

function envelope(
  directoryVersion: number,
  bindings: PreparedBinding[],
  digests: PreparedDigest[],
  compression: NonNullable<EncodeOptions['compression']>,
): Envelope {
  const json = JSON.stringify(toWire(directoryVersion, bindings, digests));
  const plain = `${BINDINGS_FORMAT_VERSION}.j.${json.length}.${json}`;
  if (compression === 'never') return { value: plain, compressed: false };
  const deflated = encodeBase64Url(deflateSync(strToU8(json), { level: 9 }));
  const packed = `${BINDINGS_FORMAT_VERSION}.z.${json.length}.${deflated}`;
  if (compression === 'always' || packed.length < plain.length) return { value: packed, compressed: true };
  return { value: plain, compressed: false };
}

/** Relative encoding: every URL becomes an index into the server table plus its path. */
function toWire(directoryVersion: number, bindings: PreparedBinding[], digests: PreparedDigest[]): WireDocument {
  const servers: string[] = [];
  const serverIndex = new Map<string, number>();
  const indexOf = (origin: string): number => {
    let index = serverIndex.get(origin);
    if (index === undefined) {
      index = servers.push(origin) - 1;
      serverIndex.set(origin, index);
    }
    return index;
  };
  const rows = bindings.map((binding): WireRow => {
    const logicalServer = indexOf(binding.logical.origin);
    const replicas = binding.replicas.map((replica): WireReplica => {
      const index = indexOf(replica.origin);
      return replica.path === binding.logical.path ? index : [index, replica.path];
    });
    const flags = binding.prefix ? FLAG_PREFIX : 0;
    if (binding.validator !== undefined) return [logicalServer, binding.logical.path, replicas, flags, binding.validator];
    if (flags !== 0) return [logicalServer, binding.logical.path, replicas, flags];
    return [logicalServer, binding.logical.path, replicas];
  });
  const wire: WireDocument = { d: directoryVersion, s: servers, b: rows };
  const sizes = bindings.flatMap((binding, row): WireSize[] => (binding.sizeBytes === undefined ? [] : [[row, binding.sizeBytes]]));
  if (sizes.length > 0) wire.n = sizes;
  if (digests.length > 0) {
    wire.i = digests.map((digest): WireDigest => [indexOf(digest.logical.origin), digest.logical.path, digest.integrity]);
  }
  return wire;
}

function prepareDocument(document: BindingsDocument): PreparedBinding[] {
  if (typeof document !== 'object' || document === null) throw new TypeError('bindings document must be an object');
  const { directoryVersion, bindings } = document;
  if (!Number.isSafeInteger(directoryVersion) || directoryVersion < 0) {
    throw new TypeError(`directoryVersion must be a safe integer >= 0 (got ${String(directoryVersion)})`);
  }
  if (!Array.isArray(bindings)) throw new TypeError('bindings must be an array');
  return bindings.map(prepareBinding);
}

function prepareBinding(binding: Binding, index: number): PreparedBinding {
  const where = `bindings[${index}]`;
  if (typeof binding !== 'object' || binding === null) throw new TypeError(`${where} must be an object`);
  const prefix = binding.prefix === true;
  const logical = splitUrl(binding.logical, `${where}.logical`, prefix);
  if (!Array.isArray(binding.replicas) || binding.replicas.length === 0) {
    throw new TypeError(`${where}.replicas must be a non-empty array of URLs`);
  }
  const replicas = binding.replicas.map((url, i) => splitUrl(url, `${where}.replicas[${i}]`, prefix));
  const { validator } = binding;
  if (validator !== undefined) {
    if (typeof validator !== 'string' || validator.length > MAX_VALIDATOR_LENGTH || !VALIDATOR_PATTERN.test(validator)) {
      throw new TypeError(`${where}.validator must be 1-${MAX_VALIDATOR_LENGTH} visible ASCII characters without spaces`);
    }
  }
  const { sizeBytes } = binding;
  if (sizeBytes !== undefined) {
    if (prefix) throw new TypeError(`${where}.sizeBytes is only for exact bindings (a prefix binding covers many resources)`);
    if (!Number.isSafeInteger(sizeBytes) || sizeBytes < 0) throw new TypeError(`${where}.sizeBytes must be a safe integer >= 0 (got ${String(sizeBytes)})`);
  }
  return { logical, replicas, prefix, validator, sizeBytes };
}

function prepareDigests(digests: ContentDigest[] | undefined): PreparedDigest[] {
  if (digests === undefined) return [];
  if (!Array.isArray(digests)) throw new TypeError('digests must be an array');
  return digests.map((digest, index) => {
    const where = `digests[${index}]`;
    if (typeof digest !== 'object' || digest === null) throw new TypeError(`${where} must be an object`);
    const logical = splitUrl(digest.logical, `${where}.logical`, false);
    if (!isSha256Integrity(digest.integrity)) throw new TypeError(`${where}.integrity must be "sha256-" and the base64 of 32 bytes`);
    return { logical, href: logical.origin + logical.path, integrity: digest.integrity };
  });
}

function splitUrl(url: unknown, where: string, prefix: boolean): SplitUrl {
  const canonical = typeof url === 'string' ? canonicalHttpUrl(url) : undefined;
  if (!canonical) throw new TypeError(`${where} must be an absolute http(s) URL without credentials (got ${JSON.stringify(url)})`);
  if (prefix && (canonical.hasQuery || !canonical.href.endsWith('/'))) {
    throw new TypeError(`${where} of a prefix binding must end with "/" and have no query (got ${canonical.href})`);
  }
  return { origin: canonical.origin, path: canonical.pathAndQuery };
}
