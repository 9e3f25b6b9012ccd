/**
 * Body sizes learnt from earlier responses, by logical URL: the size the webpp policy plans
 * with (PlanInput.sizeBytes) when the binding carries none (docs/protocol.md, "Binding
 * sizes"), e.g. for a URL under a prefix binding. From Content-Length of 200 responses;
 * bounded, least recently learnt first out. In memory only: a hint, relearnt after a restart.
 */
export class SizeMemory {
  private readonly sizes = new Map<string, number>();

  constructor(private readonly maxEntries = 2_000) {}

  /** Remembers the size of a complete (200) response's body, when it declares one. */
  learn(logicalUrl: string, response: Response): void {
    if (response.status !== 200) return;
    const declared = response.headers.get('content-length');
    const sizeBytes = declared === null || !/^\d{1,15}$/.test(declared) ? undefined : Number(declared);
    if (sizeBytes === undefined) return;
    this.sizes.delete(logicalUrl);
    this.sizes.set(logicalUrl, sizeBytes);
    if (this.sizes.size > this.maxEntries) this.sizes.delete(this.sizes.keys().next().value as string);
  }

  sizeOf(logicalUrl: string): number | undefined {
    return this.sizes.get(logicalUrl);
  }
}
