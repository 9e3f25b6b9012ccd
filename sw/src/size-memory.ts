/**
 * Body sizes learnt from earlier responses, by logical URL: the size the webpp policy plans
 * with (PlanInput.sizeBytes) when the binding carries none (docs/protocol.md, "Binding
 * sizes"), e.g. for a URL under a prefix binding. From Content-Length of 200 responses;
 * bounded, least recently learnt first out. In memory only: a hint, relearnt after a restart.
 */
import { BoundedMap } from './_private/bounded-map.js';

export class SizeMemory {
  private readonly sizes: BoundedMap<string, number>;

  constructor(maxEntries = 2_000) {
    this.sizes = new BoundedMap(maxEntries);
  }

  /** Remembers the size of a complete (200) response's body, when it declares one. */
  learn(logicalUrl: string, response: Response): void {
    if (response.status !== 200) return;
    const declared = response.headers.get('content-length');
    const sizeBytes = declared === null || !/^\d{1,15}$/.test(declared) ? undefined : Number(declared);
    if (sizeBytes === undefined) return;
    this.sizes.set(logicalUrl, sizeBytes);
  }

  /** Remembers a body size measured elsewhere (a page's Resource Timing entry: direct.ts). */
  learnBytes(logicalUrl: string, sizeBytes: number): void {
    if (Number.isSafeInteger(sizeBytes) && sizeBytes > 0) this.sizes.set(logicalUrl, sizeBytes);
  }

  sizeOf(logicalUrl: string): number | undefined {
    return this.sizes.get(logicalUrl);
  }
}
