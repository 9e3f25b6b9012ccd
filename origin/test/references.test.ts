import { describe, expect, it } from 'vitest';
import { cssReferenceUrls, htmlReferences } from '../src/bindings/html-references.js';
import { cssReferences } from '../src/bindings/css-references.js';
import { srcsetUrls } from '../src/bindings/srcset.js';
import { injectScriptTag } from '../src/bindings/inject-script.js';
import { assertCanonicalPath } from '../src/paths.js';

const PAGE = 'http://a.localhost:8081/dir/page.html';
const at = (path: string) => `http://a.localhost:8081${path}`;

describe('htmlReferences', () => {
  it('finds every kind of reference the issue lists', () => {
    const html = `<!doctype html><html><head>
      <link rel="stylesheet" href="s.css"><link rel="preload" href="/font.woff2" as="font">
      <link rel="icon" href="/favicon.ico"><link rel="preload" as="image" imagesrcset="/p1.png 1x, /p2.png 2x">
      <script src="/app.js"></script>
      <style>@import "/imported.css"; body { background: url('/bg.png') }</style>
    </head><body style="background-image: url(/body.jpg)">
      <a href="other.html#top">x</a><area href="/area">
      <img src="img/a.png" srcset="img/a-2x.png 2x, img/a-3x.png 3x">
      <picture><source srcset="/pic.webp" type="image/webp"></picture>
      <video src="/v.mp4" poster="/poster.jpg"><source src="/v.webm"><track src="/subs.vtt"></video>
      <audio src="/a.mp3"></audio><iframe src="/frame.html"></iframe><embed src="/e.swf">
      <object data="/o.pdf"></object><table background="/legacy.gif"></table>
      <svg><image href="/svg-image.png"/><use xlink:href="/sprite.svg#icon"/></svg>
      <div style="color: red"></div>
    </body></html>`;
    const { urls } = htmlReferences(html, PAGE);
    expect(new Set(urls)).toEqual(
      new Set([
        at('/dir/s.css'), at('/font.woff2'), at('/favicon.ico'), at('/p1.png'), at('/p2.png'), at('/app.js'),
        at('/imported.css'), at('/bg.png'), at('/body.jpg'), at('/dir/other.html'), at('/area'),
        at('/dir/img/a.png'), at('/dir/img/a-2x.png'), at('/dir/img/a-3x.png'), at('/pic.webp'), at('/v.mp4'),
        at('/poster.jpg'), at('/v.webm'), at('/subs.vtt'), at('/a.mp3'), at('/frame.html'), at('/e.swf'),
        at('/o.pdf'), at('/legacy.gif'), at('/svg-image.png'), at('/sprite.svg'),
      ]),
    );
  });

  it('resolves against <base href>, itself relative to the page', () => {
    const { urls, baseUrl } = htmlReferences('<head><base href="/assets/"></head><img src="x.png"><a href="//cdn.localhost/y.js">', PAGE);
    expect(baseUrl).toBe(at('/assets/'));
    expect(urls).toEqual([at('/assets/x.png'), 'http://cdn.localhost/y.js']);
  });

  it('ignores fragments, data:, javascript:, mailto: and empty values, and decodes entities', () => {
    const { urls } = htmlReferences(
      '<a href="#x"></a><a href="javascript:void 0"></a><img src="data:image/png;base64,AAAA"><a href="mailto:a@b">' +
        '<a href=""></a><a href="/q?a=1&amp;b=2">',
      PAGE,
    );
    expect(urls).toEqual([at('/q?a=1&b=2')]);
  });

  it('returns each URL once', () => {
    expect(htmlReferences('<img src="/x.png"><img src="/x.png#frag"><a href="x.png">', 'http://a.localhost:8081/').urls).toEqual([at('/x.png')]);
  });
});

describe('CSS references', () => {
  it('finds url() in every quoting style and @import strings, skipping comments', () => {
    const css = `@import "a.css"; @import url('b.css') screen; /* url(/commented.png) */
      .x { background: url( "c.png" ) , url(d\\ e.png), url('f\\'g.png') } .y{mask:url(data:image/svg+xml;utf8,x)}`;
    expect(cssReferences(css)).toEqual(['a.css', 'b.css', 'c.png', 'd e.png', "f'g.png", 'data:image/svg+xml;utf8,x']);
  });

  it('resolves against the style sheet URL', () => {
    expect(cssReferenceUrls('@import "../base.css"; i { background: url(img/i.png) }', at('/css/site.css'))).toEqual([
      at('/base.css'),
      at('/css/img/i.png'),
    ]);
  });
});

describe('srcsetUrls', () => {
  it('splits candidates, including URLs with commas and descriptors with parentheses', () => {
    expect(srcsetUrls('a.png 1x, b.png 2x')).toEqual(['a.png', 'b.png']);
    expect(srcsetUrls('a.png,b.png 2x')).toEqual(['a.png,b.png']);
    expect(srcsetUrls('a.png, b.png')).toEqual(['a.png', 'b.png']);
    expect(srcsetUrls('  a.png 100w (odd, descriptor), b.png 200w')).toEqual(['a.png', 'b.png']);
    expect(srcsetUrls('')).toEqual([]);
  });
});

describe('injectScriptTag', () => {
  it('inserts the tag right after <head> and leaves the rest byte-for-byte', () => {
    const html = '<!DOCTYPE html>\n<HTML lang=en><Head data-x="1"><title>t</title></head><body>é</body></HTML>';
    expect(injectScriptTag(html, '/webpp.js')).toBe(
      '<!DOCTYPE html>\n<HTML lang=en><Head data-x="1"><script src="/webpp.js" async></script><title>t</title></head><body>é</body></HTML>',
    );
  });

  it('falls back to after <html>, after the doctype, or the start', () => {
    expect(injectScriptTag('<html><body></body></html>', '/w.js')).toBe('<html><script src="/w.js" async></script><body></body></html>');
    expect(injectScriptTag('<!doctype html><p>x', '/w.js')).toBe('<!doctype html><script src="/w.js" async></script><p>x');
    expect(injectScriptTag('<p>x', '/w.js')).toBe('<script src="/w.js" async></script><p>x');
  });

  it('does not inject twice, and is not fooled by a mere mention of the path', () => {
    const already = '<head><script defer src="/webpp.js"></script></head>';
    expect(injectScriptTag(already, '/webpp.js')).toBe(already);
    expect(injectScriptTag('<head></head><p>see /webpp.js</p>', '/webpp.js')).toContain('<head><script src="/webpp.js" async></script>');
  });

  it('recognises the tag written with the site\'s origin or relative to the root', () => {
    for (const src of ['https://example.org/webpp.js', '//example.org/webpp.js?preset=fast', 'http://a.localhost:8081/webpp.js', 'webpp.js?preset=fast']) {
      const page = `<head><script src="${src}"></script></head><body></body>`;
      expect(injectScriptTag(page, '/webpp.js')).toBe(page);
    }
    // Another script of that name in a folder of its own is not the page script.
    expect(injectScriptTag('<head><script src="/vendor/webpp.js"></script></head>', '/webpp.js')).toContain('<script src="/webpp.js" async>');
  });
});

describe('assertCanonicalPath', () => {
  it('accepts canonical paths', () => {
    for (const path of ['/', '/a', '/a/b.html', '/dir/', '/caf%C3%A9', '/a-b_c~d.e', "/it's"]) expect(assertCanonicalPath(path)).toBe(path);
  });

  it.each([
    ['relative', 'a/b'],
    ['dot segment', '/a/../b'],
    ['trailing dot-dot', '/a/..'],
    ['single dot', '/./a'],
    ['encoded dot', '/%2e%2e/etc/passwd'],
    ['encoded slash', '/a%2Fb'],
    ['backslash', '/a\\b'],
    ['double slash', '//etc/passwd'],
    ['NUL', '/a%00b'],
    ['bad escape', '/a%zzb'],
    ['bad UTF-8', '/a%C3'],
    ['raw non-ASCII', '/café'],
    ['space', '/a b'],
    ['star', '/images/*'],
    ['query', '/a?x'],
  ])('rejects %s (%s) with WEBPP_ERR_BAD_PATH', (_name, path) => {
    expect(() => assertCanonicalPath(path)).toThrow(expect.objectContaining({ code: 'WEBPP_ERR_BAD_PATH', statusCode: 400 }));
  });
});
