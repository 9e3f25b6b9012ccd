/**
 * Late binding, the webpp policy's half (policies/webpp/cold-window.ts): which of a plan's
 * servers a request may go to now, given this client's exchanges in flight. A server whose
 * first byte (or pace, for a large body) is unknown takes one at a time; while a never-measured
 * candidate's first answer is coming, a known server takes at most six; then nothing holds.
 */
import { describe, expect, it } from 'vitest';
import { createWebppPolicy, type InFlightExchange } from '@webpp/core';
import { seededRandom } from './fake-clock.js';

const T0 = 1_000_000_000;
const A = 'https://a.example';
const B = 'https://b.example';

const sent = (server: string, count: number): InFlightExchange[] => Array.from({ length: count }, () => ({ server, sizeBytes: 0, sentAtMs: T0 }));

function policyKnowing(servers: Record<string, { ttfbMs: number; bodyBytes: number }>): ReturnType<typeof createWebppPolicy> {
  const policy = createWebppPolicy({ random: seededRandom(1), now: () => T0 });
  for (const [server, { ttfbMs, bodyBytes }] of Object.entries(servers)) {
    policy.observe({ server, purpose: 'request', outcome: 'served', nowMs: T0, ttfbMs, bodyBytes, bodyMs: 10 });
  }
  return policy;
}

describe('webpp late binding (cold-window.ts)', () => {
  it('a server never measured takes one exchange at a time: the next goes to the next unknown server, then waits', () => {
    const policy = policyKnowing({});
    expect(policy.sendableAttempt([A, B], [], 0, T0)).toBe(0);
    expect(policy.sendableAttempt([A, B], sent(A, 1), 0, T0)).toBe(1);
    expect(policy.sendableAttempt([A, B], [...sent(A, 1), ...sent(B, 1)], 0, T0)).toBeUndefined();
  });

  it('a known server takes six at most while another candidate\'s first answer is pending, and any number once none is', () => {
    const policy = policyKnowing({ [A]: { ttfbMs: 20, bodyBytes: 100_000 } });
    expect(policy.sendableAttempt([A, B], [...sent(A, 5), ...sent(B, 1)], 0, T0)).toBe(0);
    // Six at A and B's first answer still coming: wait for A (the policy's choice), not B.
    expect(policy.sendableAttempt([A, B], [...sent(A, 6), ...sent(B, 1)], 0, T0)).toBeUndefined();
    // B has nothing in flight (its answer came, or it was never asked): A takes the burst.
    expect(policy.sendableAttempt([A, B], sent(A, 40), 0, T0)).toBe(0);
  });

  it('a large body waits for a server whose pace is unknown (its first bytes were measured on small bodies), a small one does not', () => {
    const policy = policyKnowing({ [A]: { ttfbMs: 20, bodyBytes: 1_000 }, [B]: { ttfbMs: 30, bodyBytes: 100_000 } });
    expect(policy.sendableAttempt([A, B], sent(A, 1), 2_000, T0)).toBe(0);
    expect(policy.sendableAttempt([A, B], sent(A, 1), 500_000, T0)).toBe(1);
  });
});
