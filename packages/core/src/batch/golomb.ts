/**
 * Golomb-Rice coding of a sorted set of integers (a Golomb-coded set, GCS), as in the HTTP
 * cache-digest draft (draft-ietf-httpbis-cache-digest-05, Section 2.1): each difference d
 * between consecutive values is written as q = d >> k in unary (q zero bits, then a one),
 * followed by the low k bits of d, most significant bit first.
 */

/** Appends bits MSB first into a growing byte array. */
class BitWriter {
  #bytes = new Uint8Array(64);
  #bitLength = 0;

  writeBit(bit: 0 | 1): void {
    const byteIndex = this.#bitLength >> 3;
    if (byteIndex >= this.#bytes.length) {
      const grown = new Uint8Array(this.#bytes.length * 2);
      grown.set(this.#bytes);
      this.#bytes = grown;
    }
    if (bit) this.#bytes[byteIndex]! |= 0x80 >> (this.#bitLength & 7);
    this.#bitLength += 1;
  }

  /** Writes the low `count` bits of `value` (a non-negative integer below 2^53). */
  writeBits(value: number, count: number): void {
    for (let i = count - 1; i >= 0; i--) this.writeBit(Math.floor(value / 2 ** i) % 2 === 1 ? 1 : 0);
  }

  get bitLength(): number {
    return this.#bitLength;
  }

  bytes(): Uint8Array {
    return this.#bytes.slice(0, Math.ceil(this.#bitLength / 8));
  }
}

/** Reads bits MSB first; `undefined` past the end. */
class BitReader {
  #position = 0;
  constructor(readonly bytes: Uint8Array) {}

  readBit(): 0 | 1 | undefined {
    const byteIndex = this.#position >> 3;
    if (byteIndex >= this.bytes.length) return undefined;
    const bit = (this.bytes[byteIndex]! >> (7 - (this.#position & 7))) & 1;
    this.#position += 1;
    return bit as 0 | 1;
  }

  readBits(count: number): number | undefined {
    let value = 0;
    for (let i = 0; i < count; i++) {
      const bit = this.readBit();
      if (bit === undefined) return undefined;
      value = value * 2 + bit;
    }
    return value;
  }
}

/**
 * Encodes sorted, distinct, non-negative integers (each below 2^53) with Rice parameter k.
 * The result ends with at most 7 zero padding bits, which decode as nothing.
 */
export function encodeGolombRice(sortedValues: readonly number[], k: number): Uint8Array {
  const writer = new BitWriter();
  const divisor = 2 ** k;
  let previous = 0;
  for (const value of sortedValues) {
    const delta = value - previous;
    if (delta < 0) throw new RangeError('encodeGolombRice needs sorted values');
    const quotient = Math.floor(delta / divisor);
    for (let i = 0; i < quotient; i++) writer.writeBit(0);
    writer.writeBit(1);
    writer.writeBits(delta % divisor, k);
    previous = value;
  }
  return writer.bytes();
}

/**
 * Decodes what encodeGolombRice wrote. Stops at the end of the bytes; a value whose unary
 * part or remainder runs past the end is padding (or truncation) and is dropped. `maxValues`
 * bounds the work on hostile input.
 */
export function decodeGolombRice(bytes: Uint8Array, k: number, maxValues: number): number[] {
  const reader = new BitReader(bytes);
  const divisor = 2 ** k;
  const values: number[] = [];
  let previous = 0;
  while (values.length < maxValues) {
    let quotient = 0;
    let bit = reader.readBit();
    while (bit === 0) {
      quotient += 1;
      bit = reader.readBit();
    }
    if (bit === undefined) break;
    const remainder = reader.readBits(k);
    if (remainder === undefined) break;
    previous += quotient * divisor + remainder;
    values.push(previous);
  }
  return values;
}
