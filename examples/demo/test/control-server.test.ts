/**
 * The demo's control endpoint: what a browser page on another origin, or a local process
 * without the token, can and cannot do. Real HTTP on a loopback port.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearerMatches, startControlServer, type ControlServer, type ReplicaAction } from '../src/cluster/control-server.js';
import type { MachineLoadView, ReplicaView } from '../src/dashboard/model.js';

const ALLOWED_ORIGIN = 'http://a.localhost:8081';
const actions: [string, ReplicaAction][] = [];
const replica: ReplicaView = {
  id: 'a',
  server: ALLOWED_ORIGIN,
  title: 'Near and steady',
  linkDescription: '10 ms',
  running: true,
  slowed: false,
  requestCounts: { get: 0, head: 0, other: 0 },
};
let control: ControlServer;

beforeAll(async () => {
  control = await startControlServer(
    {
      replicas: () => [replica],
      allowedOrigins: () => [ALLOWED_ORIGIN],
      act: async (id, action) => {
        actions.push([id, action]);
        return { ...replica, running: action !== 'stop' };
      },
    },
    { port: 0 },
  );
});

afterAll(async () => {
  await control.close();
});

const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });

describe('demo control endpoint', () => {
  it('listens on loopback only', () => {
    expect(new URL(control.url).hostname).toBe('127.0.0.1');
  });

  it('refuses calls without the token, or with a wrong one, and changes nothing', async () => {
    const before = actions.length;
    expect((await fetch(`${control.url}/api/replicas`)).status).toBe(401);
    expect((await fetch(`${control.url}/api/replicas/a/stop`, { method: 'POST', headers: bearer('not-the-token') })).status).toBe(401);
    expect((await fetch(`${control.url}/api/replicas/a/stop`, { method: 'POST', headers: bearer(`${control.token}x`) })).status).toBe(401);
    expect(actions.length).toBe(before);
  });

  it('refuses browser calls from an origin that is not a replica, even with the token', async () => {
    const response = await fetch(`${control.url}/api/replicas/a/stop`, { method: 'POST', headers: { ...bearer(control.token), origin: 'http://evil.localhost:9999' } });
    expect(response.status).toBe(403);
    expect(response.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('answers the CORS preflight of a replica origin', async () => {
    const response = await fetch(`${control.url}/api/replicas/a/stop`, {
      method: 'OPTIONS',
      headers: { origin: ALLOWED_ORIGIN, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization' },
    });
    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-origin')).toBe(ALLOWED_ORIGIN);
    expect(response.headers.get('access-control-allow-headers')).toContain('authorization');
  });

  it('lists the replicas and carries out an action with the token', async () => {
    const list = await fetch(`${control.url}/api/replicas`, { headers: { ...bearer(control.token), origin: ALLOWED_ORIGIN } });
    expect(list.status).toBe(200);
    expect(list.headers.get('access-control-allow-origin')).toBe(ALLOWED_ORIGIN);
    expect(((await list.json()) as { replicas: ReplicaView[] }).replicas.map((entry) => entry.id)).toEqual(['a']);

    const stop = await fetch(`${control.url}/api/replicas/a/stop`, { method: 'POST', headers: bearer(control.token) });
    expect(stop.status).toBe(200);
    expect(((await stop.json()) as { replica: ReplicaView }).replica.running).toBe(false);
    expect(actions.at(-1)).toEqual(['a', 'stop']);
  });

  it('tells the dashboard how late its timers run (machine-load.ts)', async () => {
    const body = (await (await fetch(`${control.url}/api/replicas`, { headers: bearer(control.token) })).json()) as { machine: MachineLoadView };
    expect(body.machine).toMatchObject({ timerLagP95Ms: expect.any(Number) as unknown, cores: expect.any(Number) as unknown, overloaded: expect.any(Boolean) as unknown });
  });

  it('rejects unknown replicas and actions', async () => {
    expect((await fetch(`${control.url}/api/replicas/z/stop`, { method: 'POST', headers: bearer(control.token) })).status).toBe(404);
    expect((await fetch(`${control.url}/api/replicas/a/explode`, { method: 'POST', headers: bearer(control.token) })).status).toBe(400);
  });

  it('compares bearer tokens exactly', () => {
    expect(bearerMatches('Bearer abc', 'abc')).toBe(true);
    expect(bearerMatches('Bearer abcd', 'abc')).toBe(false);
    expect(bearerMatches('Bearer ', 'abc')).toBe(false);
    expect(bearerMatches(undefined, 'abc')).toBe(false);
    expect(bearerMatches('Basic abc', 'abc')).toBe(false);
  });
});
