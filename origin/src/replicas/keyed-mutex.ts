/**
 * Per-key serialisation: operations on one logical URL run one after another, operations
 * on different URLs run concurrently. This is what keeps two concurrent PUTs (or a PUT
 * racing a DELETE) on one URL from interleaving their file writes.
 */
export class KeyedMutex {
  private readonly tails = new Map<string, Promise<void>>();

  async run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const current = new Promise<void>((resolve) => (release = resolve));
    const tail = previous.then(() => current);
    this.tails.set(key, tail);
    await previous;
    try {
      return await task();
    } finally {
      release();
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }

  /** Keys with an operation running or queued. */
  get busyKeys(): number {
    return this.tails.size;
  }
}
