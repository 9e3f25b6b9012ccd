/**
 * Content negotiation of batches: the worker asks with `Accept` (see BATCH_ACCEPT in
 * @webpp/core), and the batch is compressed with an encoding from `Accept-Encoding`.
 */
import { BATCH_MEDIA_TYPE } from '@webpp/core';

interface MediaRange {
  type: string;
  q: number;
}

function parseQualityList(header: string): MediaRange[] {
  return header.split(',').flatMap((item) => {
    const [type = '', ...params] = item.split(';').map((part) => part.trim().toLowerCase());
    if (type === '') return [];
    let q = 1;
    for (const param of params) {
      const match = /^q\s*=\s*([0-9.]+)$/.exec(param);
      if (match) q = Number(match[1]);
    }
    return [{ type, q: Number.isFinite(q) ? q : 0 }];
  });
}

function headerText(value: string | string[] | undefined): string {
  return Array.isArray(value) ? value.join(',') : (value ?? '');
}

/** Whether the request's Accept header names the batch media type with a non-zero quality. */
export function acceptsBatch(accept: string | string[] | undefined): boolean {
  return parseQualityList(headerText(accept)).some((range) => range.type === BATCH_MEDIA_TYPE && range.q > 0);
}

export type BatchEncoding = 'br' | 'gzip' | 'identity';

/** The preferred encoding the client accepts: brotli, then gzip, else none. */
export function chooseEncoding(acceptEncoding: string | string[] | undefined): BatchEncoding {
  const ranges = parseQualityList(headerText(acceptEncoding));
  const quality = (coding: string): number => {
    const exact = ranges.find((range) => range.type === coding);
    if (exact) return exact.q;
    return ranges.find((range) => range.type === '*')?.q ?? 0;
  };
  if (quality('br') > 0) return 'br';
  if (quality('gzip') > 0 || quality('x-gzip') > 0) return 'gzip';
  return 'identity';
}

/** Media types that shrink under general-purpose compression (text, not JPEG/PNG/WOFF2/…). */
export function isCompressible(contentType: string | undefined): boolean {
  const mime = contentType?.split(';', 1)[0]?.trim().toLowerCase() ?? '';
  return (
    mime.startsWith('text/') ||
    /^application\/(javascript|ecmascript|json|xml|xhtml\+xml|manifest\+json|wasm|x-javascript)$/.test(mime) ||
    mime.endsWith('+xml') ||
    mime.endsWith('+json') ||
    mime === 'image/svg+xml' ||
    mime === 'image/x-icon' ||
    mime === 'image/bmp' ||
    mime === 'font/ttf' ||
    mime === 'font/otf'
  );
}
