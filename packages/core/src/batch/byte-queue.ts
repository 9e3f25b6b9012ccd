/**
 * A FIFO of byte chunks for an incremental parser: append network chunks as they come, take
 * exactly n bytes once they are there. A take within one chunk is a view, not a copy.
 */
export class ByteQueue {
  #chunks: Uint8Array[] = [];
  /** Bytes of #chunks[0] already taken. */
  #offset = 0;
  #length = 0;

  /** Bytes available to take. */
  get length(): number {
    return this.#length;
  }

  push(chunk: Uint8Array): void {
    if (chunk.length === 0) return;
    this.#chunks.push(chunk);
    this.#length += chunk.length;
  }

  /** Removes and returns the next n bytes; the caller checks `length >= n` first. */
  take(n: number): Uint8Array {
    if (n > this.#length) throw new RangeError(`take(${n}) with only ${this.#length} bytes queued`);
    this.#length -= n;
    const first = this.#chunks[0];
    if (first !== undefined && first.length - this.#offset >= n) {
      const view = first.subarray(this.#offset, this.#offset + n);
      this.#advance(first, n);
      return view;
    }
    const out = new Uint8Array(n);
    let filled = 0;
    while (filled < n) {
      const chunk = this.#chunks[0] as Uint8Array;
      const count = Math.min(chunk.length - this.#offset, n - filled);
      out.set(chunk.subarray(this.#offset, this.#offset + count), filled);
      filled += count;
      this.#advance(chunk, count);
    }
    return out;
  }

  /** The next n bytes without removing them (n <= length). */
  peek(n: number): Uint8Array {
    const out = new Uint8Array(n);
    let filled = 0;
    let offset = this.#offset;
    for (const chunk of this.#chunks) {
      if (filled === n) break;
      const count = Math.min(chunk.length - offset, n - filled);
      out.set(chunk.subarray(offset, offset + count), filled);
      filled += count;
      offset = 0;
    }
    return out;
  }

  #advance(chunk: Uint8Array, count: number): void {
    this.#offset += count;
    if (this.#offset === chunk.length) {
      this.#chunks.shift();
      this.#offset = 0;
    }
  }
}
