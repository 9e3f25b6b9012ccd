/**
 * PlanInput.preferred in the webpp policy (preferred.ts): a server whose answer costs the
 * client less (the own origin of a navigation, whose preload is on its way) goes first where
 * the policy predicts no gain elsewhere, and only there.
 */
import { describe, expect, it } from 'vitest';
import { createWebppPolicy, type ExchangeSample } from '@webpp/core';
import { FakeClock, seededRandom } from './fake-clock.js';

const A = 'http://a.localhost:8081';
const B = 'http://b.localhost:8082';
const C = 'http://c.localhost:8083';

function served(server: string, ttfbMs: number, nowMs: number): ExchangeSample {
  return { server, purpose: 'request', outcome: 'served', nowMs, ttfbMs };
}

/** A policy that saw `rounds` answers of each server, with first bytes drawn around their given means (±40 %). */
function learnt(meansMs: Record<string, number>, seed = 3) {
  const clock = new FakeClock();
  const random = seededRandom(seed);
  const policy = createWebppPolicy({ random: seededRandom(seed + 1), now: clock.now });
  for (let round = 0; round < 30; round++) {
    for (const [server, meanMs] of Object.entries(meansMs)) policy.observe(served(server, meanMs * (0.6 + 0.8 * random()), clock.advance(5)));
  }
  return { policy, clock };
}

const firstOf = (policy: ReturnType<typeof createWebppPolicy>, nowMs: number, preferred?: string) =>
  policy.plan({ logicalUrl: '/index.html', method: 'GET', candidates: [A, B, C], nowMs, ...(preferred ? { preferred } : {}) })[0];

describe('a preferred server (PlanInput.preferred)', () => {
  it('goes first among replicas the policy cannot tell apart, on every plan', () => {
    const { policy, clock } = learnt({ [A]: 6, [B]: 5, [C]: 5 });
    const firsts = Array.from({ length: 20 }, () => firstOf(policy, clock.advance(10), C));
    expect(firsts.every((attempt) => attempt?.server === C)).toBe(true);
    expect(firsts[0]?.reason).toBe('preferred-equivalent');
  });

  it('does not go first where another replica is clearly faster', () => {
    const { policy, clock } = learnt({ [A]: 400, [B]: 10, [C]: 400 });
    for (let i = 0; i < 20; i++) expect(firstOf(policy, clock.advance(10), A)?.server).toBe(B);
  });

  it('goes first when nothing is measured yet (instead of the origin\'s order)', () => {
    const clock = new FakeClock();
    const policy = createWebppPolicy({ random: seededRandom(1), now: clock.now });
    expect(firstOf(policy, clock.nowMs, B)?.server).toBe(B);
    expect(firstOf(createWebppPolicy({ random: seededRandom(1), now: clock.now }), clock.nowMs)?.server).toBe(A);
  });
});
