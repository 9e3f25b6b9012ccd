/**
 * Load records piggybacked on peer calls (DCWS, Baker and Moon 1998, Section 3.3: load
 * information rides on transfers between the servers, in extension headers). Every
 * successful signed peer call (the directory sync, the pinger, the other peer routes)
 * that carries a `webpp-peer-state` header hands it to PeerState, and its answer carries
 * this server's record. Runs in onSend, after the route's signature check passed (the
 * header is signed with the call, http/auth.ts); failed calls exchange nothing.
 */
import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import { PEER_STATE_HEADER } from '../sync/load-record.js';
import { SYNC_PATH } from '../sync/peer-sync.js';
import { WELL_KNOWN_PREFIX } from '@webpp/core';
import type { PeerState } from '../sync/peer-state.js';
import { pathStep } from '../compose/path-hooks.js';

const PEER_PREFIX = `${WELL_KNOWN_PREFIX}peer/`;

function isPeerCall(url: string): boolean {
  return url.startsWith(PEER_PREFIX) || url === SYNC_PATH || url.startsWith(`${SYNC_PATH}?`);
}

async function peerStatePlugin(app: FastifyInstance, { state }: { state: PeerState | undefined }): Promise<void> {
  if (state === undefined) return;
  const step = pathStep(app, 'webpp-peer-state');
  step.addHook('onSend', async (request, reply, payload) => {
    if (!isPeerCall(request.url) || reply.statusCode >= 400) return payload;
    state.receive(request.headers[PEER_STATE_HEADER]);
    reply.header(PEER_STATE_HEADER, state.outgoingHeaders()[PEER_STATE_HEADER]);
    return payload;
  });
}

export const webppPeerState = fp(peerStatePlugin, { fastify: '5.x', name: 'webpp-peer-state' });
