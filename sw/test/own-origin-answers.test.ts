import { describe, expect, it } from 'vitest';
import { OwnOriginUrls, carriesCredentials, isPersonalAnswer } from '../src/own-origin-answers.js';

const selfOrigin = 'http://a.localhost:1';

describe('personal answers (answers meant for one user come from the own origin)', () => {
  it('an answer is personal when it is Cache-Control: private or varies on Cookie or Authorization', () => {
    const answer = (headers: Record<string, string>): boolean => isPersonalAnswer(new Response('x', { headers }));
    expect(answer({ 'cache-control': 'max-age=0, private, must-revalidate' })).toBe(true);
    expect(answer({ 'cache-control': 'Private' })).toBe(true);
    expect(answer({ vary: 'Accept-Encoding, Cookie' })).toBe(true);
    expect(answer({ vary: 'authorization' })).toBe(true);
    expect(answer({ 'cache-control': 'public, max-age=60' })).toBe(false);
    expect(answer({ 'cache-control': 'no-store' })).toBe(false);
    expect(answer({ vary: 'Accept-Encoding, Cookie-Consent' })).toBe(false);
    expect(answer({})).toBe(false);
  });

  it('a request carries the visitor cookies when the browser would send them to the own origin', () => {
    expect(carriesCredentials(new Request(`${selfOrigin}/account`, { credentials: 'include' }), selfOrigin)).toBe(true);
    expect(carriesCredentials(new Request(`${selfOrigin}/account`, { credentials: 'same-origin' }), selfOrigin)).toBe(true);
    expect(carriesCredentials(new Request(`${selfOrigin}/account`, { credentials: 'omit' }), selfOrigin)).toBe(false);
    expect(carriesCredentials(new Request('http://cdn.localhost:2/x', { credentials: 'same-origin' }), selfOrigin)).toBe(false);
  });

  it('remembers a bounded number of URLs, the least recently noted going first', () => {
    const urls = new OwnOriginUrls(2);
    urls.note('/a');
    urls.note('/b');
    urls.note('/a');
    urls.note('/c');
    expect([urls.has('/a'), urls.has('/b'), urls.has('/c')]).toEqual([true, false, true]);
  });
});
