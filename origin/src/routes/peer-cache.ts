/**
 * The cooperative cache's server-to-server endpoints (formats in
 * cache/cluster/peer-protocol.ts), signed with the cluster secret exactly like
 * routes/peer.ts (http/cluster-auth-hooks.ts). Every call names its sender in the signed
 * query (`from`, one of this server's peers); state-changing calls carry a one-time nonce
 * (`n`) and are refused (403) when it was seen before.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { addClusterAuth, signedBodyOf as bodyOf } from '../http/cluster-auth-hooks.js';
import { WEBPP_ERR_BAD_URL, WEBPP_ERR_FORBIDDEN } from '../errors.js';
import { NONCE_PARAM } from '../cache/cluster/replay-guard.js';
import {
  CACHE_COUNT_HEADER,
  CACHE_HOLDER_HEADER,
  decodeObject,
  encodeObject,
  OBJECT_CONTENT_TYPE,
  parseCountReport,
  parseInvalidate,
  PEER_CACHE_COUNTS_PATH,
  PEER_CACHE_INVALIDATE_PATH,
  PEER_CACHE_OBJECT_PATH,
} from '../cache/cluster/peer-protocol.js';
import type { CooperativeCache } from '../cache/cluster/cooperative-cache.js';
import type { ClusterInvalidation } from '../cache/cluster/cluster-invalidation.js';
import type { ResolvedOptions } from '../options.js';

export interface PeerCacheRoutesOptions {
  options: Pick<ResolvedOptions, 'clusterSecret' | 'publicUrl' | 'aliasUrls' | 'maxClockSkewMs' | 'maxReplicaBytes'>;
  cooperative: CooperativeCache;
  invalidation: ClusterInvalidation;
}

type Query = Record<string, string | string[] | undefined>;

function single(query: Query, name: string): string | undefined {
  const value = query[name];
  return Array.isArray(value) ? undefined : value;
}

export async function peerCacheRoutes(app: FastifyInstance, deps: PeerCacheRoutesOptions): Promise<void> {
  const { options, cooperative, invalidation } = deps;
  addClusterAuth(app, options, options.maxReplicaBytes + 1024 * 1024);

  /** The sender: must be a configured peer. */
  const senderOf = (request: FastifyRequest): string => {
    const from = single(request.query as Query, 'from');
    if (from === undefined || !cooperative.membership.peers.includes(from)) throw new WEBPP_ERR_FORBIDDEN('the sender (from) is not a peer of this server');
    cooperative.membership.markUp(from);
    return from;
  };
  const requireFreshNonce = (request: FastifyRequest): void => {
    if (!cooperative.replayGuard.accept(single(request.query as Query, NONCE_PARAM))) throw new WEBPP_ERR_FORBIDDEN('missing, malformed or replayed nonce');
  };
  const pathOf = (request: FastifyRequest): string => {
    const path = single(request.query as Query, 'path');
    if (path === undefined || !path.startsWith('/') || path.length > 4096) throw new WEBPP_ERR_BAD_URL('path must be a logical path starting with /');
    return path;
  };

  app.get(PEER_CACHE_OBJECT_PATH, async (request, reply) => {
    const from = senderOf(request);
    const path = pathOf(request);
    const answer = cooperative.serveLookup(path, single(request.query as Query, 'home') === '1', from);
    reply.header(CACHE_COUNT_HEADER, String(answer.count));
    if (answer.object === undefined) {
      if (answer.holder !== undefined) reply.header(CACHE_HOLDER_HEADER, answer.holder);
      return reply.code(404).send();
    }
    return reply.header('content-type', OBJECT_CONTENT_TYPE).send(encodeObject(answer.object));
  });

  app.post(PEER_CACHE_OBJECT_PATH, async (request, reply) => {
    const from = senderOf(request);
    requireFreshNonce(request);
    const pushed = decodeObject(pathOf(request), bodyOf(request));
    const kept = cooperative.receivePush(pushed, pushed.reason ?? 'fill', pushed.recirculation, from);
    reply.header(CACHE_COUNT_HEADER, String(cooperative.countOf(pushed.path)));
    return reply.code(kept ? 201 : 202).send({ kept });
  });

  app.post(PEER_CACHE_COUNTS_PATH, async (request) => {
    const from = senderOf(request);
    requireFreshNonce(request);
    const report = parseCountReport(bodyOf(request));
    cooperative.counters.reportsReceived += 1;
    if (report.stats !== undefined) cooperative.totals.record(from, report.stats, Date.now());
    const counts = cooperative.counts.receiveReport(
      from,
      report.entries.map(([path, hits, holds]) => [path, hits, holds === 1]),
    );
    return { counts };
  });

  app.post(PEER_CACHE_INVALIDATE_PATH, async (request) => {
    senderOf(request);
    requireFreshNonce(request);
    const removed = invalidation.receive(parseInvalidate(bodyOf(request)));
    return { removed };
  });
}
