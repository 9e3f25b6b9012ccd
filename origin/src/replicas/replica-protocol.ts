/**
 * The peer protocol of replica updates (docs/protocol.md): a server pushes a new version of a
 * replica with a signed PUT to PEER_REPLICAS_PATH + path on each other holder, naming the
 * logical URL in LOGICAL_URL_HEADER and the version in REPLICA_VERSION_HEADER
 * (replica-version.ts). Peer content answers (routes/peer-content.ts) name it the same way.
 */
import { WELL_KNOWN_PREFIX } from '@webpp/core';

export const PEER_REPLICAS_PATH = `${WELL_KNOWN_PREFIX}peer/replicas`;
export const LOGICAL_URL_HEADER = 'webpp-logical-url';
