/**
 * The one byte range a response honours, parsed by `range-parser` (jshttp, the parser
 * @fastify/send carries a copy of). One range of bytes is answered 206; a malformed header,
 * another unit, several ranges or an invalid range get the whole body (RFC 9110 Section
 * 14.2 lets a server ignore Range); a range that selects no byte is unsatisfiable (416).
 */
import parseRange from 'range-parser';

export interface ByteRange {
  /** First byte, inclusive. */
  start: number;
  /** Last byte, inclusive. */
  end: number;
}

/** `bytes=-<n>`: the one form whose meaning range-parser's answer loses (see below). */
const SUFFIX_RANGE = /^bytes=-(\d+)$/i;

/** The range to answer of a representation of `sizeBytes`; undefined: answer the whole body. */
export function byteRangeOf(header: string | undefined, sizeBytes: number): ByteRange | 'unsatisfiable' | undefined {
  if (header === undefined) return undefined;
  const ranges = parseRange(sizeBytes, header);
  if (ranges === -2) return undefined;
  if (ranges !== -1) return ranges.type.toLowerCase() === 'bytes' && ranges.length === 1 ? ranges[0] : undefined;
  // range-parser answers -1 for three cases RFC 9110 Section 14.1.1 tells apart:
  // a suffix longer than the representation selects all of it (a zero suffix selects nothing);
  const suffix = SUFFIX_RANGE.exec(header.trim());
  if (suffix !== null) return Number(suffix[1]) > 0 && sizeBytes > 0 ? { start: 0, end: sizeBytes - 1 } : 'unsatisfiable';
  // a range whose last byte comes before its first is invalid, whatever the size: ignored;
  // otherwise the range starts past the end: unsatisfiable.
  return parseRange(Number.MAX_SAFE_INTEGER, header) === -1 ? undefined : 'unsatisfiable';
}
