/**
 * A peer whose clock ran ahead (within maxClockSkewMs) and was then set back, e.g. by NTP
 * (two real servers on loopback, signed peer calls). Its records carried the later times, and
 * a record is kept only when newer than the one held (the replay guard), so once its clock
 * was right every record it sent was refused until its clock caught up with the last one:
 * minutes of stale load figures and pushed service times. An answer to this server's own
 * call (a ping, a sync) is no replay, and now replaces the held record.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signClusterRequest } from '../src/http/auth.js';
import { encodeLoadRecord } from '../src/sync/load-record.js';
import { removeTempDirs, startQuietPeers, tempDir, CLUSTER_SECRET, waitFor } from './helpers.js';
import type { ReplicaServer } from '../src/server.js';

const AHEAD_MS = 4 * 60_000;
let urls: string[] = [];
let servers: ReplicaServer[] = [];

beforeAll(async () => {
  ({ urls, servers } = await startQuietPeers(2, async () => ({ root: await tempDir(), peerPingIntervalMs: 100, peerTimeoutMs: 1000 })));
});

afterAll(async () => {
  for (const server of servers) await server.close();
  await removeTempDirs();
});

describe('a peer whose clock was set back', () => {
  it('has its records taken again at the next answer to a ping', async () => {
    const [a, b] = urls as [string, string];
    const state = (servers[0] as ReplicaServer).app.webpp.peerState;
    if (state === undefined) throw new Error('no peer state');
    await waitFor('a to hold a record of b', () => state.record(b));
    // b's clock ran 4 minutes ahead: a record it sent then (its ping to a).
    const ahead = encodeLoadRecord({ server: b, atMs: Date.now() + AHEAD_MS, requestsPerSecond: 0, bytesPerSecond: 0, utilisation: 0, hot: [], fields: {} });
    const url = `${a}/.well-known/webpp/peer/state/ping`;
    const headers = { 'webpp-peer-state': ahead };
    const ping = await fetch(url, { method: 'POST', headers: { ...headers, 'webpp-cluster-auth': signClusterRequest(CLUSTER_SECRET, 'POST', url, new Uint8Array(0), { headers }) } });
    expect(ping.status).toBe(204);
    expect(state.record(b)?.record.atMs).toBeGreaterThan(Date.now() + AHEAD_MS / 2);
    // Its clock is right again: a takes its records at the next answer.
    await waitFor('a to take b\'s current record again', () => (state.record(b)?.record.atMs ?? Infinity) < Date.now() + 1000, { timeoutMs: 3000 });
  });
});
