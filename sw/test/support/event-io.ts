import type { RespondIO } from '../../src/replica-client.js';

/** What a fetch event provides: fetch, and waitUntil whose promises the test can await. */
export function eventIO(): RespondIO & { settled(): Promise<void> } {
  const pending: Promise<unknown>[] = [];
  return {
    fetch: (request) => fetch(request),
    waitUntil: (promise) => void pending.push(promise),
    settled: async () => {
      while (pending.length > 0) await Promise.allSettled(pending.splice(0));
    },
  };
}
