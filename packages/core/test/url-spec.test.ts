import { describe, expect, it } from 'vitest';
import { canonicalUrl, formatUrlSpec, parseUrlSpec, prefixCandidates } from '../src/url-spec.js';

describe('canonicalUrl', () => {
  it('resolves against a base, drops the fragment and refuses other schemes and credentials', () => {
    expect(canonicalUrl('/x/../y#f', 'http://a.localhost:8081')).toBe('http://a.localhost:8081/y');
    expect(canonicalUrl('http://A.localhost:80/p?q#')).toBe('http://a.localhost/p?q');
    expect(canonicalUrl('ftp://a.localhost/x')).toBeUndefined();
    expect(canonicalUrl('http://u:p@a.localhost/x')).toBeUndefined();
    expect(canonicalUrl('relative/only')).toBeUndefined();
    expect(canonicalUrl('data:text/plain,x', 'http://a.localhost')).toBeUndefined();
  });
});

describe('URL specs', () => {
  it('parses and formats prefixes, and refuses stray wildcards and queries in prefixes', () => {
    expect(parseUrlSpec('/img/*', 'http://a.localhost')).toEqual({ url: 'http://a.localhost/img/', prefix: true });
    expect(formatUrlSpec({ url: 'http://a.localhost/img/', prefix: true })).toBe('http://a.localhost/img/*');
    expect(parseUrlSpec('http://a.localhost/x.png')).toEqual({ url: 'http://a.localhost/x.png', prefix: false });
    expect(parseUrlSpec('http://a.localhost/i*g/x')).toBeUndefined();
    expect(parseUrlSpec('http://a.localhost/img?q/*')).toBeUndefined();
  });

  it('lists the prefixes of a URL longest first, never inside the query', () => {
    expect([...prefixCandidates('http://a/x/y/z.jpg?q=/w/')]).toEqual(['http://a/x/y/', 'http://a/x/', 'http://a/']);
    expect([...prefixCandidates('http://a/')]).toEqual(['http://a/']);
  });
});
