/**
 * The push announcer and the pinger (issue 13): a peer whose ping is still in flight when a
 * new value is pushed is not counted as told. That ping carries the record made when it
 * started, so the announcer pings the peer again once it is back, with the new value. The
 * peer is a real HTTP server on loopback that holds its first ping and records every
 * record it is sent; the pinger and the peer state are the origin's own.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { Pinger } from '../src/sync/pinger.js';
import { PeerState } from '../src/sync/peer-state.js';
import { decodeLoadRecord, PEER_STATE_HEADER } from '../src/sync/load-record.js';
import { PushAnnouncer } from '../src/push/push-announcer.js';
import { CLUSTER_SECRET, waitFor } from './helpers.js';

const quietLog = { debug: () => undefined, warn: () => undefined };
const closers: Array<() => Promise<void>> = [];

afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

/** A peer that answers pings 204, holding the first for `holdFirstMs`; `served` lists the `value` field of each record received. */
async function slowPeer(holdFirstMs: number): Promise<{ url: string; served: Array<unknown> }> {
  const served: Array<unknown> = [];
  let first = true;
  const server: Server = createServer((request: IncomingMessage, response) => {
    served.push(decodeLoadRecord(request.headers[PEER_STATE_HEADER])?.fields.value);
    request.resume();
    const holdMs = first ? holdFirstMs : 0;
    first = false;
    setTimeout(() => response.writeHead(204).end(), holdMs);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  closers.push(() => new Promise((done) => server.close(() => done())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, served };
}

describe('announcing a new value while a ping is in flight', () => {
  it('pings the peer again once that ping is back, and the second ping carries the new value', async () => {
    const peer = await slowPeer(400);
    const state = new PeerState({
      self: 'http://127.0.0.1:1',
      peers: [peer.url],
      ownLoad: () => ({ requestsPerSecond: 0, bytesPerSecond: 0, utilisation: 0, hot: [] }),
      missedPingsForDown: 3,
      maxClockSkewMs: 30_000,
    });
    let value = 1;
    let pushedAtMs = 1;
    state.registerField('value', () => value);
    // The pinger's own timer is not started: only the calls below ping.
    const pinger = new Pinger({ state, secret: CLUSTER_SECRET, intervalMs: 60_000, timeoutMs: 5_000, log: quietLog });
    const announcer = new PushAnnouncer({ state, pinger, intervalMs: 60_000, pushedAtMs: () => pushedAtMs, utilisation: () => undefined });
    closers.push(() => Promise.all([announcer.stop(), pinger.stop()]).then(() => undefined));

    announcer.tick(); // announces value 1: one ping, held by the peer
    await waitFor('the first ping to arrive', () => peer.served.length === 1);
    value = 2;
    pushedAtMs = 2;
    announcer.tick(); // a new value while the first ping is in flight
    await waitFor('the first ping to be answered', () => !pinger.pinging(peer.url), { timeoutMs: 5_000 });
    announcer.tick(); // the next check: the peer is still owed value 2
    await waitFor('the peer to get value 2', () => peer.served.at(-1) === 2, { timeoutMs: 5_000 });
    expect(peer.served).toEqual([1, 2]);
    // Told: later checks with nothing new ping no more.
    await waitFor('the second ping to be answered', () => !pinger.pinging(peer.url), { timeoutMs: 5_000 });
    announcer.tick();
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(peer.served).toEqual([1, 2]);
  });
});
