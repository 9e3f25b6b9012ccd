import { describe, expect, it } from 'vitest';
import { buildPhysicalRequest, buildProbeRequest } from '../src/physical-request.js';

const selfOrigin = 'http://a.localhost:1';
const signal = new AbortController().signal;

describe('buildPhysicalRequest', () => {
  const page = new Request('http://a.localhost:1/big.txt', {
    headers: { range: 'bytes=0-9', 'if-none-match': '"v1"', 'cache-control': 'no-cache', 'x-app': 'yes' },
    credentials: 'include',
  });

  it('sends the page its own request when the own origin serves the very URL asked (mode, credentials, redirect mode, headers)', () => {
    const noCors = new Request('http://a.localhost:1/go/pic', { mode: 'no-cors', headers: { 'x-app': 'yes' } });
    const own = buildPhysicalRequest(noCors, 'http://a.localhost:1/go/pic', { selfOrigin, signal });
    expect({ url: own.url, mode: own.mode, credentials: own.credentials, redirect: own.redirect }).toEqual({
      url: 'http://a.localhost:1/go/pic',
      mode: 'no-cors',
      credentials: noCors.credentials,
      redirect: 'follow',
    });
    expect(own.headers.get('x-app')).toBe('yes');
    expect(own.signal.aborted).toBe(false);
  });

  it("asks the own origin for a media element's range in CORS mode: a copy of its no-cors request would lose the Range (Chromium)", () => {
    const media = new Request('http://a.localhost:1/clip.webm', { headers: { range: 'bytes=100-' } });
    Object.defineProperty(media, 'mode', { value: 'no-cors' });
    Object.defineProperty(media, 'destination', { value: 'video' });
    const own = buildPhysicalRequest(media, 'http://a.localhost:1/clip.webm', { selfOrigin, signal });
    expect({ mode: own.mode, credentials: own.credentials, range: own.headers.get('range') }).toEqual({ mode: 'cors', credentials: 'same-origin', range: 'bytes=100-1048675' }) // one chunk (media-range.ts);
  });

  it('keeps credentials and every header for a same-origin replica', () => {
    const request = buildPhysicalRequest(page, 'http://a.localhost:1/big.txt', { selfOrigin, signal });
    expect(request.credentials).toBe('include');
    expect(request.mode).toBe('cors'); // the page's own
    expect(request.headers.get('cache-control')).toBe('no-cache');
    expect(request.headers.get('range')).toBe('bytes=0-9');
  });

  it('omits credentials, uses CORS and forwards Range and conditional headers to another origin', () => {
    const request = buildPhysicalRequest(page, 'http://b.localhost:2/big.txt', { selfOrigin, signal });
    expect(request.url).toBe('http://b.localhost:2/big.txt');
    expect(request.credentials).toBe('omit');
    expect(request.mode).toBe('cors');
    expect(request.headers.get('range')).toBe('bytes=0-9');
    expect(request.headers.get('if-none-match')).toBe('"v1"');
    expect(request.headers.get('x-app')).toBe('yes');
    expect(request.headers.has('cache-control')).toBe(false);
    expect(request.method).toBe('GET');
  });

  it('a resume asks for the rest of the body: its own Range and If-Range, no page conditionals, no integrity, no cache', () => {
    const withIntegrity = new Request('http://a.localhost:1/big.txt', {
      headers: { range: 'bytes=0-9', 'if-none-match': '"v1"', 'if-modified-since': 'Mon, 01 Jan 2024 00:00:00 GMT', 'x-app': 'yes' },
      integrity: 'sha256-AAAA',
    });
    const request = buildPhysicalRequest(withIntegrity, 'http://b.localhost:2/big.txt', {
      selfOrigin,
      signal,
      resume: { range: 'bytes=5-9', ifRange: '"e1"' },
    });
    expect(request.headers.get('range')).toBe('bytes=5-9');
    expect(request.headers.get('if-range')).toBe('"e1"');
    expect(request.headers.has('if-none-match')).toBe(false);
    expect(request.headers.has('if-modified-since')).toBe(false);
    expect(request.headers.get('x-app')).toBe('yes');
    expect(request.integrity).toBe('');
    expect(request.cache).toBe('no-store');
    const plain = buildPhysicalRequest(withIntegrity, 'http://b.localhost:2/big.txt', { selfOrigin, signal });
    expect(plain.integrity).toBe('sha256-AAAA');
  });

  it("asks a replica for its redirect as the answer where the page's request follows redirects (own-origin-answers.ts)", () => {
    const redirectOf = (logical: Request, physical: string, follow?: boolean): RequestRedirect =>
      buildPhysicalRequest(logical, physical, { selfOrigin, signal, ...(follow === undefined ? {} : { follow }) }).redirect;
    const image = new Request('http://a.localhost:1/go/pic', { mode: 'no-cors' });
    expect(redirectOf(image, 'http://b.localhost:2/go/pic')).toBe('manual');
    expect(redirectOf(image, 'http://a.localhost:1/mirror/go/pic')).toBe('manual'); // the own origin, another URL
    expect(redirectOf(image, 'http://a.localhost:1/go/pic')).toBe('follow'); // the page's own request
    const navigation = new Request('http://a.localhost:1/docs');
    Object.defineProperty(navigation, 'mode', { value: 'navigate' });
    Object.defineProperty(navigation, 'redirect', { value: 'manual' });
    expect(redirectOf(navigation, 'http://b.localhost:2/docs')).toBe('manual');
    // The own origin did not answer: the replica's redirect is followed (and a navigation's mapped back).
    expect(redirectOf(image, 'http://b.localhost:2/go/pic', true)).toBe('follow');
    expect(redirectOf(navigation, 'http://b.localhost:2/docs', true)).toBe('follow');
    // What the page asked for itself stays.
    expect(redirectOf(new Request('http://a.localhost:1/x', { redirect: 'manual' }), 'http://b.localhost:2/x')).toBe('manual');
    expect(redirectOf(new Request('http://a.localhost:1/x', { redirect: 'error' }), 'http://b.localhost:2/x')).toBe('error');
    // The rest of a body follows.
    expect(buildPhysicalRequest(image, 'http://b.localhost:2/go/pic', { selfOrigin, signal, resume: { range: 'bytes=5-', ifRange: undefined } }).redirect).toBe('follow');
  });

  it('a host that merely starts like the page origin is another origin', () => {
    const request = buildPhysicalRequest(page, 'http://a.localhost:10/big.txt', { selfOrigin, signal });
    expect(request.credentials).toBe('omit');
  });

  it('probes bypass the HTTP cache and never carry cookies to other origins', () => {
    const probe = buildProbeRequest('http://b.localhost:2/x', selfOrigin, signal);
    expect([probe.method, probe.cache, probe.credentials, probe.mode]).toEqual(['HEAD', 'no-store', 'omit', 'cors']);
  });

  it('probes take a redirect as the answer and do not follow it (e2e: sw-site-owner.spec.ts)', () => {
    expect(buildProbeRequest('http://b.localhost:2/x', selfOrigin, signal).redirect).toBe('manual');
    expect(buildProbeRequest('http://a.localhost:1/x', selfOrigin, signal, undefined, 'follow').redirect).toBe('follow');
  });
});
