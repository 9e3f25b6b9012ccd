/**
 * A Map that holds at most `maxEntries`: setting a key makes it the newest, and the oldest
 * goes first when it is full (a Map iterates in insertion order). The worker's in-memory
 * hints (learnt sizes, stale physical URLs, personal logical URLs) share it.
 */
export class BoundedMap<K, V> {
  private readonly entries = new Map<K, V>();

  constructor(private readonly maxEntries: number) {}

  get(key: K): V | undefined {
    return this.entries.get(key);
  }

  has(key: K): boolean {
    return this.entries.has(key);
  }

  delete(key: K): void {
    this.entries.delete(key);
  }

  /** The entries, oldest first. */
  toArray(): [K, V][] {
    return [...this.entries];
  }

  set(key: K, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    if (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value as K);
  }
}
