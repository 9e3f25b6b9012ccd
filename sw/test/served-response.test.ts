import { describe, expect, it } from 'vitest';
import { logicalUrlOfRedirect, rewrap } from '../src/served-response.js';

describe('logicalUrlOfRedirect', () => {
  it('maps a redirect inside a mirrored layout to the logical origin', () => {
    expect(logicalUrlOfRedirect('http://a.localhost:1/docs', 'http://b.localhost:2/docs', 'http://b.localhost:2/docs/')).toBe(
      'http://a.localhost:1/docs/',
    );
  });

  it('maps through a different mount point on the replica', () => {
    expect(
      logicalUrlOfRedirect('http://a.localhost:1/img/cat.png', 'http://b.localhost:2/files/img/cat.png', 'http://b.localhost:2/files/img/dog.png?x=1'),
    ).toBe('http://a.localhost:1/img/dog.png?x=1');
    expect(logicalUrlOfRedirect('http://a.localhost:1/aa/x', 'http://b.localhost:2/ba/x', 'http://b.localhost:2/ba/y')).toBe(
      'http://a.localhost:1/aa/y',
    );
  });

  it('has no logical counterpart for a redirect to another origin or outside the mount', () => {
    expect(logicalUrlOfRedirect('http://a.localhost:1/x', 'http://b.localhost:2/x', 'http://login.localhost:3/')).toBeUndefined();
    expect(logicalUrlOfRedirect('http://a.localhost:1/img/x', 'http://b.localhost:2/files/img/x', 'http://b.localhost:2/other')).toBeUndefined();
  });
});

describe('rewrap', () => {
  it('keeps status, status text, headers and body', async () => {
    const original = new Response('hello', { status: 201, statusText: 'Made', headers: { 'content-type': 'text/plain', etag: '"1"' } });
    const wrapped = rewrap(original, 'GET');
    expect([wrapped.status, wrapped.statusText, wrapped.headers.get('content-type'), wrapped.headers.get('etag')]).toEqual([
      201,
      'Made',
      'text/plain',
      '"1"',
    ]);
    expect(await wrapped.text()).toBe('hello');
  });

  it('drops the body of 304s and HEAD answers', async () => {
    expect(rewrap(new Response(null, { status: 304 }), 'GET').body).toBeNull();
    expect(rewrap(new Response('x'), 'HEAD').body).toBeNull();
  });
});
