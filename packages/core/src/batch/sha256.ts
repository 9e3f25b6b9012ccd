/**
 * SHA-256 (FIPS 180-4) in plain TypeScript, so that the cache digest hashes identically in
 * the Service Worker, in Node and in tests without WebCrypto (which is asynchronous and
 * absent from the pure core), and incremental, so that the worker verifies a body's digest
 * as it streams (sw/src/integrity.ts). The one SHA-256 of the project's browser code.
 * Correctness is checked against the FIPS test vectors in the unit tests.
 */

const K = new Uint32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
  0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
  0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
  0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
  0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
  0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
  0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
  0xc67178f2,
]);

const rotr = (x: number, n: number): number => (x >>> n) | (x << (32 - n));

const INITIAL_HASH = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19];

/** An incremental SHA-256: update() with the message's parts in order, then digest() once. */
export interface Sha256 {
  update(bytes: Uint8Array): Sha256;
  /** The 32-byte digest of everything given to update(). */
  digest(): Uint8Array;
}

export function createSha256(): Sha256 {
  const h = new Uint32Array(INITIAL_HASH);
  const w = new Uint32Array(64);
  const pending = new Uint8Array(64);
  const pendingView = new DataView(pending.buffer);
  let pendingBytes = 0;
  let totalBytes = 0;

  /** FIPS 180-4 section 6.2.2: one 64-byte block at `offset` of `view`. */
  const compress = (view: DataView, offset: number): void => {
    for (let t = 0; t < 16; t++) w[t] = view.getUint32(offset + t * 4);
    for (let t = 16; t < 64; t++) {
      const w15 = w[t - 15] as number;
      const w2 = w[t - 2] as number;
      const s0 = rotr(w15, 7) ^ rotr(w15, 18) ^ (w15 >>> 3);
      const s1 = rotr(w2, 17) ^ rotr(w2, 19) ^ (w2 >>> 10);
      w[t] = ((w[t - 16] as number) + s0 + (w[t - 7] as number) + s1) >>> 0;
    }
    let a = h[0] as number;
    let b = h[1] as number;
    let c = h[2] as number;
    let d = h[3] as number;
    let e = h[4] as number;
    let f = h[5] as number;
    let g = h[6] as number;
    let hh = h[7] as number;
    for (let t = 0; t < 64; t++) {
      const s1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25);
      const ch = (e & f) ^ (~e & g);
      const t1 = (hh + s1 + ch + (K[t] as number) + (w[t] as number)) >>> 0;
      const s0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22);
      const maj = (a & b) ^ (a & c) ^ (b & c);
      const t2 = (s0 + maj) >>> 0;
      hh = g;
      g = f;
      f = e;
      e = (d + t1) >>> 0;
      d = c;
      c = b;
      b = a;
      a = (t1 + t2) >>> 0;
    }
    h[0] = ((h[0] as number) + a) >>> 0;
    h[1] = ((h[1] as number) + b) >>> 0;
    h[2] = ((h[2] as number) + c) >>> 0;
    h[3] = ((h[3] as number) + d) >>> 0;
    h[4] = ((h[4] as number) + e) >>> 0;
    h[5] = ((h[5] as number) + f) >>> 0;
    h[6] = ((h[6] as number) + g) >>> 0;
    h[7] = ((h[7] as number) + hh) >>> 0;
  };

  const hash: Sha256 = {
    update(bytes) {
      totalBytes += bytes.length;
      let at = 0;
      if (pendingBytes > 0) {
        at = Math.min(64 - pendingBytes, bytes.length);
        pending.set(bytes.subarray(0, at), pendingBytes);
        pendingBytes += at;
        if (pendingBytes < 64) return hash;
        compress(pendingView, 0);
        pendingBytes = 0;
      }
      const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      for (; at + 64 <= bytes.length; at += 64) compress(view, at);
      pending.set(bytes.subarray(at), 0);
      pendingBytes = bytes.length - at;
      return hash;
    },
    digest() {
      // Padding (section 5.1.1): 0x80, zeros, then the 64-bit big-endian bit length.
      const bitLength = totalBytes * 8;
      pending[pendingBytes++] = 0x80;
      if (pendingBytes > 56) {
        pending.fill(0, pendingBytes);
        compress(pendingView, 0);
        pendingBytes = 0;
      }
      pending.fill(0, pendingBytes, 56);
      pendingView.setUint32(56, Math.floor(bitLength / 0x100000000));
      pendingView.setUint32(60, bitLength >>> 0);
      compress(pendingView, 0);
      const out = new Uint8Array(32);
      const outView = new DataView(out.buffer);
      for (let i = 0; i < 8; i++) outView.setUint32(i * 4, h[i] as number);
      return out;
    },
  };
  return hash;
}

/** The 32-byte SHA-256 digest of `message`. */
export function sha256(message: Uint8Array): Uint8Array {
  return createSha256().update(message).digest();
}
