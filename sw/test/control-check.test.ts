import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ControlCheck } from '../src/control-check.js';

const app = Fastify({ forceCloseConnections: true });
const heads: string[] = [];
let origin = '';
/** While set, the own origin holds its answers until it resolves (a slow own origin). */
let held: Promise<void> | undefined;

beforeAll(async () => {
  app.head('/*', async (request, reply) => {
    heads.push(request.url);
    await held;
    return reply.header('webpp-control', 'off').send();
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  origin = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await app.close();
});

/** A check of the test's own origin, at most once a second by the given clock. */
function checkOnOwnOrigin(now: () => number, answered: (response: Response, url: string) => Promise<void>): ControlCheck {
  return new ControlCheck({ selfOrigin: origin, intervalMs: 1_000, now, head: (url, signal) => fetch(url, { method: 'HEAD', signal }), timeoutMs: () => 2_000, answered });
}

describe('ControlCheck', () => {
  it("asks the own origin after a replica's navigation, at most once per interval since it was last heard", async () => {
    let nowMs = 0;
    const answers: string[] = [];
    const check = checkOnOwnOrigin(() => nowMs, async (response, url) => void answers.push(`${url} ${response.headers.get('webpp-control')}`));
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

  it('runs one more check, for the latest page, when navigations came while one was on its way', async () => {
    let nowMs = 0;
    const answers: string[] = [];
    const check = checkOnOwnOrigin(() => nowMs, async (_response, url) => void answers.push(url));
    heads.length = 0;
    let release = (): void => undefined;
    held = new Promise((resolve) => (release = resolve));
    const first = check.afterReplicaNavigation(`${origin}/one.html`);
    await expect.poll(() => heads).toEqual(['/one.html']); // on its way, held by the own origin
    nowMs = 100;
    const second = check.afterReplicaNavigation(`${origin}/two.html`);
    const third = check.afterReplicaNavigation(`${origin}/three.html`);
    release();
    held = undefined;
    await Promise.all([first, second, third]);
    // Not dropped, not queued: one more check, though the own origin was just heard.
    expect(heads).toEqual(['/one.html', '/three.html']);
    expect(answers).toEqual([`${origin}/one.html`, `${origin}/three.html`]);
    // Nothing waits now: the interval rule holds again.
    nowMs = 500;
    await check.afterReplicaNavigation(`${origin}/four.html`);
    expect(heads).toHaveLength(2);
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
