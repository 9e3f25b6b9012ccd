/**
 * What runs beside the requests: `app.webpp` for code outside the plugin (origin-api.ts), and
 * the timers and peers started when the app is ready and stopped, in reverse, when it closes.
 */
import type { FastifyInstance } from 'fastify';
import type { WebppOrigin } from '../origin-api.js';
import { closeDataFolder } from './data-folder.js';
import type { OriginParts } from './parts.js';

export function originApi(parts: OriginParts): WebppOrigin {
  const { folder, directory, store, replicas, stats, preprocessCache, memoryCache, sync, gossip, loadTable, lazyReplicas, clientScripts, killSwitch, flushDirectory, gauges } = parts;
  return {
    get options() {
      return parts.optionsInForce; // with the features registered by the app
    },
    dataDir: folder.dataDir,
    directory,
    store,
    replicas,
    stats,
    preprocessCache,
    cache: memoryCache,
    sync,
    peerState: gossip?.state,
    loadTable,
    get replication() {
      return parts.replication; // set when the replication feature is registered
    },
    lazyReplicas,
    clientScripts,
    get clientAggregate() {
      return parts.clientAggregate; // set when the client-aggregate feature is registered
    },
    get killSwitch() {
      return killSwitch.on;
    },
    set killSwitch(on: boolean) {
      killSwitch.on = on;
    },
    flushDirectory,
    async syncNow() {
      await Promise.all([sync?.syncAll(), replicas.retryPendingPushes()]);
      await replicas.reconcile();
    },
    gauges,
  };
}

export function registerLifecycle(app: FastifyInstance, parts: OriginParts): void {
  const { utilisation, sync, gossip, loadTable, replicas, lazyReplicas, push, directoryStore, doc, folder } = parts;
  app.addHook('onReady', async () => {
    push.announcer?.start();
    utilisation.meter.start();
    sync?.start();
    gossip?.pinger.start();
    loadTable.start();
    replicas.start();
    lazyReplicas?.start();
  });
  app.addHook('onClose', async () => {
    await push.announcer?.stop();
    await replicas.stop();
    await lazyReplicas?.stop();
    loadTable.stop();
    await gossip?.pinger.stop();
    utilisation.meter.stop();
    await sync?.stop();
    await directoryStore.stop();
    doc.destroy();
    await closeDataFolder(folder);
  });
}
