/**
 * CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320), the checksum of zlib, gzip and PNG.
 * The batch framing uses it to detect truncated or corrupted frames (docs/batching.md). It is
 * an integrity check against accidents, not an authenticator: TLS protects against tampering.
 */

const TABLE = new Uint32Array(256);
for (let n = 0; n < 256; n++) {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  TABLE[n] = c >>> 0;
}

/** Incremental CRC-32: feed chunks with `update`, read the checksum with `digest`. */
class Crc32 {
  #state = 0xffffffff;

  update(bytes: Uint8Array): this {
    let c = this.#state;
    for (let i = 0; i < bytes.length; i++) c = (TABLE[(c ^ (bytes[i] as number)) & 0xff] as number) ^ (c >>> 8);
    this.#state = c;
    return this;
  }

  /** The checksum of everything fed so far, as an unsigned 32-bit integer. */
  digest(): number {
    return (this.#state ^ 0xffffffff) >>> 0;
  }
}

/** CRC-32 of the concatenation of `chunks`. */
export function crc32(...chunks: Uint8Array[]): number {
  const crc = new Crc32();
  for (const chunk of chunks) crc.update(chunk);
  return crc.digest();
}
