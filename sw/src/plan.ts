/**
 * Stage 2 of a bound request, plan (after route.ts): which replicas, in which order, with
 * which timeouts and hedges. Core's engine asks the policy named in the options (paper
 * Section 4.1, and packages/core/src/policies); this stage only gives it what the worker
 * knows: the candidates of the binding, the body size when known (the binding's, else an
 * earlier answer's; issue 11), and which physical URLs answered 404/410 under this directory
 * version (they go last: they may be back later). Then attempt.ts.
 */
import { serverOf } from '@webpp/core';
import type { ClientEngine, ResolvedBinding, ServerId } from '@webpp/core';
import { attempt } from './attempt.js';
import type { ExchangeSender } from './fetch-io.js';
import type { Lifecycle, RespondIO } from './plugins.js';
import type { ServerMemory } from './server-memory.js';

/** What every stage of the path shares, given once by the client (replica-client.ts). */
export interface RequestPath {
  engine: ClientEngine<Response, ExchangeSender>;
  selfOrigin: string;
  lifecycle: Lifecycle;
  /** What the worker remembers of replicas' URLs: probe targets, sizes, stale bindings (server-memory.ts). */
  memory: ServerMemory;
  /**
   * Every replica failed: whether a subresource's request is tried again after a backoff (core's
   * retry rounds). False when a plugin answers such a request at once (offline copies:
   * stale-if-error, RFC 5861 §4). A navigation is never retried (attempt.ts).
   */
  retryFailedRequests: boolean;
}

/** The body size the binding row announces, when it has one (issue 11: size-aware policies). */
export function announcedSize(resolved: ResolvedBinding): number | undefined {
  if (resolved.logical !== resolved.binding.logical) return undefined; // only for the very URL it binds, not a query variant
  const sizeBytes = (resolved.binding as { sizeBytes?: unknown }).sizeBytes;
  return typeof sizeBytes === 'number' && Number.isFinite(sizeBytes) && sizeBytes >= 0 ? sizeBytes : undefined;
}

export function plan(request: Request, resolved: ResolvedBinding, io: RespondIO, path: RequestPath): Promise<Response> {
  const { engine, memory } = path;
  const arrivedMs = performance.now();
  const atMs = Date.now();
  const physicalByServer = new Map<ServerId, string>();
  const sizeBytes = announcedSize(resolved) ?? memory.sizes.sizeOf(resolved.logical);
  const size = sizeBytes === undefined ? {} : { sizeBytes };
  for (const url of resolved.physicalUrls) {
    const server = serverOf(url);
    if (!physicalByServer.has(server)) physicalByServer.set(server, url);
    memory.probeUrls.remember(server, url, sizeBytes);
  }
  const candidates = [...physicalByServer.keys()];
  const preferred = io.preferred !== undefined && physicalByServer.has(io.preferred) ? { preferred: io.preferred } : {};
  const attempts = engine.plan(
    { logicalUrl: resolved.logical, method: request.method, candidates, ...size, ...preferred },
    (server) => physicalByServer.get(server),
    (server) => memory.staleBindings.isStale(physicalByServer.get(server)!, resolved.directoryVersion),
  );
  return attempt({ request, resolved, logicalUrl: resolved.logical, io, arrivedMs, atMs, planMs: performance.now() - arrivedMs, candidates, plan: attempts }, path);
}
