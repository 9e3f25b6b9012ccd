import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ControlCheck } from '../src/control-check.js';

const app = Fastify({ forceCloseConnections: true });
const heads: string[] = [];
let origin = '';

beforeAll(async () => {
  app.head('/*', async (request, reply) => {
    heads.push(request.url);
    return reply.header('webpp-control', 'off').send();
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  origin = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await app.close();
});

describe('ControlCheck', () => {
  it("asks the own origin after a replica's navigation, at most once per interval since it was last heard", async () => {
    let nowMs = 0;
    const answers: string[] = [];
    const check = new ControlCheck({
      selfOrigin: origin,
      intervalMs: 1_000,
      now: () => nowMs,
      head: (url, signal) => fetch(url, { method: 'HEAD', signal }),
      timeoutMs: () => 2_000,
      answered: async (response, url) => void answers.push(`${url} ${response.headers.get('webpp-control')}`),
    });
    heads.length = 0;
    await check.afterReplicaNavigation(`${origin}/page.html`);
    expect(answers).toEqual([`${origin}/page.html off`]);
    nowMs = 500;
    await check.afterReplicaNavigation(`${origin}/page.html`);
    expect(heads).toEqual(['/page.html']);
    nowMs = 1_600;
    check.heard(); // the own origin answered a request meanwhile
    nowMs = 2_000;
    await check.afterReplicaNavigation(`${origin}/page.html`);
    expect(heads).toHaveLength(1);
    nowMs = 2_700;
    // A logical URL on another origin: the own origin's root is asked instead.
    await check.afterReplicaNavigation('http://elsewhere.localhost:1/x');
    expect(heads).toEqual(['/page.html', '/']);
  });

  it('never rejects when the own origin is down', async () => {
    const check = new ControlCheck({
      selfOrigin: 'http://127.0.0.1:1',
      intervalMs: 0,
      now: () => 0,
      head: (url, signal) => fetch(url, { method: 'HEAD', signal }),
      timeoutMs: () => 2_000,
      answered: async () => {
        throw new Error('not reached');
      },
    });
    await expect(check.afterReplicaNavigation('http://127.0.0.1:1/')).resolves.toBeUndefined();
  });
});
