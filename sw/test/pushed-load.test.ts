/** The worker's reading of server push (pushed-load.ts): what reaches the policy, and what the trust rule keeps out. */
import { describe, expect, it } from 'vitest';
import { PushedLoad } from '../src/pushed-load.js';

const A = 'http://a.localhost:8081';
const B = 'http://b.localhost:8082';
const C = 'http://c.localhost:8083';
const EVIL = 'http://evil.localhost:6666';

/** What the policy was given: [server, serviceMs, atMs], and utilisation when the server said. */
type Learned = [string, number, number] | [string, number, number, number];

function reader(nowMs = 100_000): { pushed: PushedLoad; learned: Learned[] } {
  const learned: Learned[] = [];
  const sink = (server: string, serviceMs: number, atMs: number, utilisation?: number): void => {
    learned.push(utilisation === undefined ? [server, serviceMs, atMs] : [server, serviceMs, atMs, utilisation]);
  };
  const pushed = new PushedLoad({ sink, isKnownServer: (server) => server !== EVIL, now: () => nowMs });
  return { pushed, learned };
}

const response = (headers: Record<string, string>): Response => new Response(null, { headers });

describe('PushedLoad', () => {
  it("gives the policy the answering server's own value and the other replicas' values, dated by their age", () => {
    const { pushed, learned } = reader();
    pushed.read(response({ 'server-timing': 'webpp;dur=12.5', 'webpp-load': `"${B}";dur=40;age=2000, "${C}";dur=3;age=0` }), A);
    expect(learned).toEqual([
      [A, 12.5, 100_000],
      [B, 40, 98_000],
      [C, 3, 100_000],
    ]);
    expect(pushed.views().map((view) => [view.server, view.via])).toEqual([
      [A, 'server-timing'],
      [B, 'webpp-load'],
      [C, 'webpp-load'],
    ]);
  });

  it("gives the policy each server's utilisation (util) with its value, and shows it in the state view", () => {
    const { pushed, learned } = reader();
    pushed.read(response({ 'server-timing': 'webpp;dur=12.5;util=0.62', 'webpp-load': `"${B}";dur=40;util=1;age=2000, "${C}";dur=3;age=0` }), A);
    expect(learned).toEqual([
      [A, 12.5, 100_000, 0.62],
      [B, 40, 98_000, 1],
      [C, 3, 100_000],
    ]);
    expect(pushed.views()).toEqual([
      { server: A, serviceMs: 12.5, utilisation: 0.62, atMs: 100_000, via: 'server-timing' },
      { server: B, serviceMs: 40, utilisation: 1, atMs: 98_000, via: 'webpp-load' },
      { server: C, serviceMs: 3, atMs: 100_000, via: 'webpp-load' },
    ]);
    expect(pushed.views().find((view) => view.server === C)).not.toHaveProperty('utilisation');
  });

  it('a malformed utilisation is absent and the value still counts (fail open)', () => {
    const { pushed, learned } = reader();
    pushed.read(response({ 'server-timing': 'webpp;dur=12.5;util=-0.1', 'webpp-load': `"${B}";dur=40;util=abc;age=0, "${C}";dur=3;util=1.5;age=0` }), A);
    expect(learned).toEqual([
      [A, 12.5, 100_000],
      [B, 40, 100_000],
      [C, 3, 100_000],
    ]);
    expect(pushed.views().every((view) => !('utilisation' in view))).toBe(true);
  });

  it('ignores rows about servers the site does not use, and rows about the answering server itself', () => {
    const { pushed, learned } = reader();
    pushed.read(response({ 'webpp-load': `"${EVIL}";dur=1, "${A}";dur=999` }), A);
    expect(learned).toEqual([]);
  });

  it('an older value relayed by a replica does not replace a newer one heard from the server itself', () => {
    const { pushed, learned } = reader();
    pushed.read(response({ 'server-timing': 'webpp;dur=80' }), B);
    pushed.read(response({ 'webpp-load': `"${B}";dur=5;age=3000` }), C);
    expect(learned).toEqual([[B, 80, 100_000]]);
  });

  it('responses without push headers teach nothing and never throw', () => {
    const { pushed, learned } = reader();
    pushed.read(response({ 'server-timing': 'db;dur=5', 'webpp-load': '"not a url";dur=1' }), A);
    pushed.read(new Response(null), A);
    expect(learned).toEqual([]);
  });
});
