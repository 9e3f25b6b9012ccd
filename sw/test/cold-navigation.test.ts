/**
 * preloadFirst (sw/src/cold-navigation.ts): a cold worker's navigation takes the preload's
 * answer when it comes before the stored state and serves; otherwise it waits for the state,
 * and never longer than the state takes.
 */
import { describe, expect, it } from 'vitest';
import { preloadFirst } from '../src/cold-navigation.js';

function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void; reject: (error: unknown) => void } {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((yes, no) => ((resolve = yes), (reject = no)));
  return { promise, resolve, reject };
}

/** Settles `promise` or says 'pending' after the current microtasks and one macrotask. */
async function peek<T>(promise: Promise<T>): Promise<T | 'pending'> {
  return Promise.race([promise, new Promise<'pending'>((resolve) => setTimeout(() => resolve('pending'), 5))]);
}

describe('preloadFirst', () => {
  it('a preload that comes first and serves is the answer, before the state', async () => {
    const restored = deferred<boolean>();
    const page = new Response('page');
    expect(await peek(preloadFirst(Promise.resolve(page), restored.promise))).toBe(page);
  });

  it('a redirect and a 403 serve too (as the plan would take them from the own origin)', async () => {
    const restored = deferred<boolean>();
    for (const status of [302, 403]) {
      const answer = new Response(null, { status });
      expect(await peek(preloadFirst(Promise.resolve(answer), restored.promise))).toBe(answer);
    }
  });

  for (const [what, preload] of [
    ['answers 503', () => Promise.resolve(new Response('down', { status: 503 }))],
    ['answers 404', () => Promise.resolve(new Response('gone', { status: 404 }))],
    ['fails (network error)', () => Promise.reject(new TypeError('Failed to fetch'))],
    ['is not there (no preload sent)', () => Promise.resolve(undefined)],
    ['hangs', () => new Promise<Response>(() => undefined)],
  ] as const) {
    it(`a preload that ${what} is no answer: undefined once the state is restored, not before`, async () => {
      const restored = deferred<boolean>();
      const first = preloadFirst(preload(), restored.promise);
      expect(await peek(first)).toBe('pending');
      restored.resolve(true);
      expect(await peek(first)).toBeUndefined();
    });
  }

  it('the state first: undefined, even when the preload serves later', async () => {
    const restored = deferred<boolean>();
    const preload = deferred<Response>();
    const first = preloadFirst(preload.promise, restored.promise);
    restored.resolve(true);
    expect(await peek(first)).toBeUndefined();
    preload.resolve(new Response('late'));
    expect(await first).toBeUndefined();
  });

  it('a state that does not come in time (false) ends the wait too', async () => {
    const first = preloadFirst(new Promise<Response>(() => undefined), Promise.resolve(false));
    expect(await peek(first)).toBeUndefined();
  });
});
