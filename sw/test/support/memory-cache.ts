import type { CacheLike } from '../../src/batch/logical-cache.js';

/** Cache Storage in memory, for tests that run the worker's caches in Node. */
export class MemoryCache implements CacheLike {
  readonly entries = new Map<string, { status: number; headers: [string, string][]; body: Uint8Array }>();
  async match(url: string): Promise<Response | undefined> {
    const entry = this.entries.get(url);
    return entry && new Response(entry.body as Uint8Array<ArrayBuffer>, { status: entry.status, headers: entry.headers });
  }
  async put(url: string, response: Response): Promise<void> {
    this.entries.set(url, { status: response.status, headers: [...response.headers], body: new Uint8Array(await response.arrayBuffer()) });
  }
  async delete(url: string): Promise<boolean> {
    return this.entries.delete(url);
  }
  async keys(): Promise<{ url: string }[]> {
    return [...this.entries.keys()].map((url) => ({ url }));
  }
}
