/**
 * The cluster helper itself, over real HTTP (no browser): real origins behind emulators,
 * and each fault doing what the e2e specs rely on.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { decodeBindings } from '@webpp/core';
import { Cluster } from './cluster.js';
import { demoSite } from './site.js';
import { TaggedTraffic } from './tagged-traffic.js';

let cluster: Cluster | undefined;

afterEach(async () => {
  await cluster?.stop();
  cluster = undefined;
});

/** Node's fetch cannot resolve *.localhost everywhere: go to 127.0.0.1 with the same port. */
function direct(url: string): string {
  const parsed = new URL(url);
  parsed.hostname = '127.0.0.1';
  return parsed.href;
}

describe('Cluster', () => {
  it('serves the site from real origins behind emulators: bindings name every replica, CORS on replicas', async () => {
    cluster = await Cluster.start({ site: demoSite(2) });
    const b = cluster.replica('b');
    const response = await fetch(direct(b.url('/img/1.png')));
    expect(response.status).toBe(200);
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    const decoded = decodeBindings(response.headers.get('webpp-bindings') ?? '');
    expect(decoded.ok && decoded.document.bindings[0]?.replicas).toEqual(cluster.replicas.map((replica) => `${replica.origin}/`));
    expect(b.requests('/img/1.png', 'GET')).toHaveLength(1);
    await expect.poll(() => b.linkLog.map((record) => record.url)).toContain('/img/1.png');
    // The page script tag replaced the marker.
    expect(await (await fetch(direct(cluster.logicalUrl('/index.html')))).text()).toContain('<script src="/webpp.js" async></script>');
  });

  it('kill refuses connections; start brings the same origin back with its stored replicas', async () => {
    cluster = await Cluster.start({ site: demoSite(1) });
    await cluster.storeReplica('/stored.txt', 'kept across restarts', 'text/plain', ['b']);
    const b = cluster.replica('b');
    await b.kill();
    await expect(fetch(direct(b.url('/stored.txt')))).rejects.toThrow();
    await b.start();
    const response = await fetch(direct(b.url('/stored.txt')));
    expect(await response.text()).toBe('kept across restarts');
    expect(response.headers.get('etag')).toMatch(/^"sha256-/);
  });

  it('stall holds answers until release; forced statuses and broken bodies come from the server', async () => {
    cluster = await Cluster.start({ site: { ...demoSite(1), '/big.bin': { contentType: 'application/octet-stream', body: Buffer.alloc(300_000, 7) } } });
    const b = cluster.replica('b');
    b.stall();
    await expect(fetch(direct(b.url('/data.json')), { signal: AbortSignal.timeout(300) })).rejects.toThrow();
    b.release();
    expect((await fetch(direct(b.url('/data.json')))).status).toBe(200);

    b.forcedStatus = 503;
    expect((await fetch(direct(b.url('/data.json')))).status).toBe(503);
    b.forcedStatus = undefined;

    b.breakBodyAfterBytes = 100_000;
    const broken = await fetch(direct(b.url('/big.bin')));
    expect(broken.headers.get('content-length')).toBe('300000');
    await expect(broken.arrayBuffer()).rejects.toThrow();
  });

  it('emulates a netem scenario per replica and counts requests by query tag', async () => {
    const scenario = {
      formatVersion: 1,
      name: 'two',
      durationMs: 10_000,
      seed: 1,
      servers: { A: { link: { delayMs: 40 } }, B: { link: { delayMs: 10 } } },
    };
    cluster = await Cluster.start({ site: demoSite(1), scenario });
    expect(cluster.replicas.map((replica) => replica.host)).toEqual(['a.localhost', 'b.localhost']);
    expect(cluster.replica('A').delayMs).toBe(40);
    const traffic = new TaggedTraffic(cluster);
    await (await fetch(direct(cluster.replica('B').url('/data.json?p=single&c=0&i=3')))).text();
    await (await fetch(direct(cluster.replica('A').url('/data.json')))).text();
    await expect.poll(() => traffic.traffic('single').requests).toBe(1);
    const seen = traffic.traffic('single');
    expect(seen.byServer).toEqual({ B: 1 });
    expect(seen.gets.get('0|3')?.[0]?.plan?.delayMs).toBe(10);
    await expect.poll(() => traffic.untaggedRequests()).toBe(1);
  });
});
