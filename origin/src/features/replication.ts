/**
 * `@webpp/origin/replication`: load-driven replication (issue 14; DCWS, Baker and Moon 1998,
 * docs/origin.md "Load-driven replication") as a plugin of its own: the decider that places
 * this server's hot resources on the least-loaded peer and takes them back. Register it after
 * webppOrigin, on a server with `peers` and a `clusterSecret`:
 *
 *   import webppReplication from '@webpp/origin/replication';
 *   await app.register(webppOrigin, { publicUrl, peers, clusterSecret });
 *   await app.register(webppReplication, { autoReplicatePrefixes: ['/img/'] });
 *
 * webppOrigin registers this same plugin for `autoReplicate: true`, with the same options. It
 * adds no hook and no endpoint: a timer (every T_st), `app.webpp.replication` and its part of
 * the statistics. What every server of a cluster does whether it decides or not stays
 * webppOrigin's: the load table and the peer load records (with the largest replica it
 * accepts), and the lazy copies of the replicas its peers place on it.
 */
import fp from 'fastify-plugin';
import { Type, type Static } from 'typebox';
import type { FastifyInstance } from 'fastify';
import { replicationSettings } from '../options/replication-schema.js';
import { ReplicationController } from '../replication/controller.js';
import { pick } from '../options/slice.js';
import { FEATURE_PLUGIN, claimFeature, featureOptionsResolver, originPartsOf, showFeatureOptions } from './origin-context.js';

const NAME = '@webpp/origin/replication';

/** The feature's options: the decider's rows of webppOrigin's options, but the switch. */
export const replicationOptionsSchema = Type.Object(replicationSettings, { additionalProperties: false });
export type ReplicationOptions = Static<typeof replicationOptionsSchema>;
const resolveReplicationOptions = featureOptionsResolver(replicationOptionsSchema, 'webppReplication');

/** The option names of the feature, for webppOrigin's slice (compose/features.ts). */
export const REPLICATION_OPTION_NAMES = Object.keys(replicationSettings) as Array<keyof typeof replicationSettings>;

async function replicationFeature(app: FastifyInstance, raw: ReplicationOptions): Promise<void> {
  const parts = originPartsOf(app, NAME);
  claimFeature(parts, NAME);
  const options = resolveReplicationOptions(raw);
  showFeatureOptions(parts, { autoReplicate: true, ...options });
  const peerState = parts.gossip?.state;
  if (peerState === undefined) {
    parts.folder.log.warn({ feature: NAME }, 'webpp automatic replication needs peers and a cluster secret: not started');
    return;
  }
  const controller = new ReplicationController({
    options: { ...options, autoReplicate: true, ...pick(parts.options, ['publicUrl', 'logicalOrigin', 'scriptPath', 'workerPath', 'maxReplicaBytes', 'replicationPeerMaxAgeMs']) },
    directory: parts.directory,
    loadTable: parts.loadTable,
    peerState,
    log: parts.folder.log,
  });
  parts.replication = controller;
  app.addHook('onReady', async () => controller.start());
  app.addHook('onClose', async () => controller.stop());
}

/** Load-driven replication on a webpp origin (register after webppOrigin). */
const webppReplication = fp(replicationFeature, { ...FEATURE_PLUGIN, name: NAME });
export { webppReplication, webppReplication as default };
