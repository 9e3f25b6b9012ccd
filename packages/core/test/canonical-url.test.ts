import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalHttpUrl } from '../src/_private/whatwg-url.js';

/** What the WHATWG parser says, with the fragment dropped: the reference for the fast path. */
function reference(url: string): string | undefined {
  try {
    const parsed = new URL(url);
    if ((parsed.protocol !== 'http:' && parsed.protocol !== 'https:') || parsed.username || parsed.password) return undefined;
    parsed.hash = '';
    return parsed.href.endsWith('#') ? parsed.href.slice(0, -1) : parsed.href;
  } catch {
    return undefined;
  }
}

describe('canonicalHttpUrl', () => {
  it('agrees with the WHATWG URL parser on tricky input', () => {
    const tricky = [
      'http://a.localhost:8081/x/../y',
      'http://a.localhost:8081/x/%2e%2E/y',
      'http://a.localhost:8081/./y?',
      'http://a.localhost:8081/a b',
      'http://a.localhost:8081/a\\b',
      "http://a.localhost:8081/it's?q='x'",
      'http://a.localhost:8081/p?q=1#frag',
      'http://a.localhost:8081',
      'http://A.localhost:80/x',
      'https://a.localhost:443/x',
      'http://u:p@a.localhost/x',
      'http://[::1]:8080/x',
      'http://a.localhost:8081/%zz/%41',
      'http://a.localhost:8081/é',
      'http://a.localhost:8081/x?é',
      'ftp://a/x',
      'javascript:alert(1)',
      'http://a.localhost:8081/{x}|^[y]',
      'http://a.localhost:8081/x\ty',
    ];
    for (const url of tricky) expect(canonicalHttpUrl(url)?.href, url).toBe(reference(url));
  });

  it('agrees with the WHATWG URL parser on arbitrary web URLs', () => {
    const urls = fc.oneof(
      fc.webUrl({ withQueryParameters: true, withFragments: true }),
      fc
        .tuple(fc.constantFrom('http://a.localhost:8081', 'https://B.localhost', 'http://127.0.0.1:9'), fc.string({ unit: 'grapheme-ascii' }))
        .map(([origin, rest]) => `${origin}/${rest}`),
    );
    fc.assert(
      fc.property(urls, (url) => {
        expect(canonicalHttpUrl(url)?.href).toBe(reference(url));
      }),
      { numRuns: 1000 },
    );
  });

  it('splits origin and path-and-query consistently', () => {
    fc.assert(
      fc.property(fc.webUrl({ withQueryParameters: true }), (url) => {
        const canonical = canonicalHttpUrl(url);
        if (!canonical) return;
        expect(canonical.origin + canonical.pathAndQuery).toBe(canonical.href);
        expect(canonical.hasQuery).toBe(canonical.pathAndQuery.includes('?'));
      }),
    );
  });
});
