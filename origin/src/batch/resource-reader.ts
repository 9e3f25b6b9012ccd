/**
 * Reads the embedded resources of a batch through the server itself, with Fastify's
 * `inject`: each resource is answered exactly as a separate request would be (static files,
 * replicas from the replica store, dynamic routes, proxied upstreams; validators, caching
 * headers and bindings headers alike), without a socket.
 */
import type { FastifyInstance } from 'fastify';

/** What a HEAD request tells about a resource before its body is read. */
export interface ResourceHead {
  status: number;
  /** The ETag, compared against the cache digest. */
  validator: string | undefined;
  contentLength: number | undefined;
  contentType: string | undefined;
  /** True when the body would come content-encoded: such parts are left to the client. */
  encoded: boolean;
}

export interface ResourceBody {
  status: number;
  /** Response headers worth keeping in a batch part (lower-case names). */
  headers: Array<[string, string]>;
  validator: string | undefined;
  body: Buffer;
}

export interface ResourceReader {
  head(path: string, forward: Record<string, string>): Promise<ResourceHead>;
  get(path: string, forward: Record<string, string>): Promise<ResourceBody>;
}

/**
 * Headers that describe a transfer, not a resource, or must not travel inside a batch:
 * hop-by-hop, framing, CORS of the inner response, cookies.
 */
const DROPPED_PART_HEADERS = new Set([
  'connection',
  'keep-alive',
  'transfer-encoding',
  'content-length',
  'content-encoding',
  'content-range',
  'accept-ranges',
  'set-cookie',
  'access-control-allow-origin',
  'access-control-allow-credentials',
  'access-control-expose-headers',
  'timing-allow-origin',
  'strict-transport-security',
  'alt-svc',
  'upgrade',
  'trailer',
  'proxy-authenticate',
]);

const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9a-z]+$/;
// eslint-disable-next-line no-control-regex
const CONTROL_CHARACTERS = /[\0-\x08\x0a-\x1f\x7f]/;
/** Visible ASCII, like an entity tag (RFC 9110 §8.8.3); anything else is not used as a validator. */
const VALIDATOR = /^[\x21-\x7e]{1,256}$/;

/** The ETag when it is a usable validator. */
export function usableValidator(etag: string | undefined): string | undefined {
  return etag !== undefined && VALIDATOR.test(etag) ? etag : undefined;
}

type RawHeaders = Record<string, string | string[] | number | undefined>;

function single(headers: RawHeaders, name: string): string | undefined {
  const value = headers[name];
  if (value === undefined) return undefined;
  return Array.isArray(value) ? value.join(', ') : String(value);
}

/** Keeps the resource headers of a response, lower-cased, for a batch part. */
export function partHeaders(headers: RawHeaders): Array<[string, string]> {
  const kept: Array<[string, string]> = [];
  for (const [rawName, value] of Object.entries(headers)) {
    const name = rawName.toLowerCase();
    if (value === undefined || DROPPED_PART_HEADERS.has(name)) continue;
    const text = Array.isArray(value) ? value.join(', ') : String(value);
    // What the batch reader accepts (it rejects the whole batch otherwise): token names,
    // values without control characters.
    if (!HEADER_NAME.test(name) || CONTROL_CHARACTERS.test(text)) continue;
    kept.push([name, text]);
  }
  return kept;
}

function isEncoded(headers: RawHeaders): boolean {
  const encoding = single(headers, 'content-encoding');
  return encoding !== undefined && encoding.trim().toLowerCase() !== 'identity';
}

/** The head of a body already read (a style sheet read while planning the batch). */
export function headOf(resource: ResourceBody): ResourceHead {
  return {
    // A content-encoded answer was read as status 0 (injectResourceReader.get).
    status: resource.status,
    validator: resource.validator,
    contentLength: resource.body.byteLength,
    contentType: resource.headers.find(([name]) => name === 'content-type')?.[1],
    encoded: false,
  };
}

/** A ResourceReader that asks `app` itself, through `inject`. */
export function injectResourceReader(app: FastifyInstance): ResourceReader {
  const request = (method: 'GET' | 'HEAD', path: string, forward: Record<string, string>) =>
    app.inject({
      method,
      url: path,
      // Identity bodies: a part is compressed, if at all, with the whole batch.
      headers: { ...forward, accept: '*/*', 'accept-encoding': 'identity' },
    });
  return {
    async head(path, forward) {
      const response = await request('HEAD', path, forward);
      const headers = response.headers as RawHeaders;
      const length = Number(single(headers, 'content-length'));
      return {
        status: response.statusCode,
        validator: usableValidator(single(headers, 'etag')),
        contentLength: Number.isFinite(length) ? length : undefined,
        contentType: single(headers, 'content-type'),
        encoded: isEncoded(headers),
      };
    },
    async get(path, forward) {
      const response = await request('GET', path, forward);
      const headers = response.headers as RawHeaders;
      return {
        status: isEncoded(headers) ? 0 : response.statusCode,
        headers: partHeaders(headers),
        validator: usableValidator(single(headers, 'etag')),
        body: response.rawPayload,
      };
    },
  };
}
