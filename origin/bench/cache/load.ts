/**
 * The cache benchmark's load: `clients` concurrent clients in this process, each sending one
 * request at a time over keep-alive HTTP/1.1 to a server picked uniformly at random (a TCP
 * router in front of a cache array, IBM Section 3.1.2), for a Zipf-distributed page.
 * Bounded by time and by request count. Records every latency for the percentiles.
 */
import { Agent, request } from 'node:http';

export interface LoadOptions {
  ports: readonly number[];
  clients: number;
  durationMs: number;
  maxRequests: number;
  /** The next page to ask for (a Zipf rank). */
  nextPage: () => number;
  random: () => number;
}

export interface LoadResult {
  requests: number;
  errors: number;
  /** The first error's message, if any. */
  firstError: string | undefined;
  non200: number;
  elapsedMs: number;
  throughputRps: number;
  p50Ms: number;
  p95Ms: number;
  bytes: number;
}

function get(agent: Agent, port: number, path: string): Promise<{ status: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    const outgoing = request({ host: '127.0.0.1', port, path, agent, timeout: 30_000 }, (response) => {
      let bytes = 0;
      response.on('data', (chunk: Buffer) => (bytes += chunk.byteLength));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, bytes }));
      response.on('error', reject);
    });
    outgoing.on('timeout', () => outgoing.destroy(new Error('request timed out')));
    outgoing.on('error', reject);
    outgoing.end();
  });
}

function percentile(sorted: Float64Array, share: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(share * sorted.length))] ?? Number.NaN;
}

export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: options.clients });
  const latencies: number[] = [];
  let errors = 0;
  let firstError: string | undefined;
  let non200 = 0;
  let bytes = 0;
  let started = 0;
  const startMs = performance.now();
  const deadlineMs = startMs + options.durationMs;
  const client = async (): Promise<void> => {
    while (started < options.maxRequests && performance.now() < deadlineMs) {
      started += 1;
      const port = options.ports[Math.floor(options.random() * options.ports.length)] as number;
      const path = `/p/${options.nextPage()}.html`;
      const sentMs = performance.now();
      try {
        const answer = await get(agent, port, path);
        latencies.push(performance.now() - sentMs);
        bytes += answer.bytes;
        if (answer.status !== 200) non200 += 1;
      } catch (error) {
        errors += 1;
        firstError ??= error instanceof Error ? error.message : String(error);
      }
    }
  };
  await Promise.all(Array.from({ length: options.clients }, client));
  const elapsedMs = performance.now() - startMs;
  agent.destroy();
  const sorted = Float64Array.from(latencies).sort();
  return {
    requests: latencies.length,
    errors,
    firstError,
    non200,
    elapsedMs,
    throughputRps: (latencies.length / elapsedMs) * 1000,
    p50Ms: percentile(sorted, 0.5),
    p95Ms: percentile(sorted, 0.95),
    bytes,
  };
}
