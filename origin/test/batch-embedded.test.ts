/** Which references of a page are embedded resources, i.e. go into its batch. */
import { describe, expect, it } from 'vitest';
import { acceptsBatch, chooseEncoding, embeddedResourceUrls, isCompressible } from '../src/batch/index.js';

const PAGE = 'http://a.localhost:8081/docs/page.html';

describe('embedded resources of a page', () => {
  it('takes what the browser surely fetches to render the page, resolved and deduplicated', () => {
    const html = `<!doctype html><html><head>
      <link rel="stylesheet" href="../css/site.css"><link rel="icon" href="/favicon.png"><link rel="icon" href="/favicon-2.png" type="image/svg+xml">
      <link rel="preload" as="font" href="/f.woff2"><link rel="preload" as="fetch" href="/data.json">
      <link rel="alternate stylesheet" href="/alt.css"><link rel="next" href="/docs/next.html">
      <script src="app.js"></script><script>inline()</script><script nomodule src="legacy.js"></script>
      <script type="text/x-template" src="tpl.html"></script>
      <style>body { background: url("/img/bg.png") } @import "/css/more.css";</style></head>
      <body><img src="img/a.png" srcset="img/a.png 1x, img/a@2x.png 2x"><img src="img/plain.png"><img src="img/plain.png#again">
      <picture><source srcset="img/b.webp"><img src="img/b.jpg"></picture>
      <div style="background-image:url('img/c.png')"></div><input type="image" src="go.png">
      <video src="/movie.mp4" poster="poster.jpg"><source src="/movie.webm"></video><audio src="/a.mp3"></audio>
      <iframe src="/frame.html"></iframe><a href="/other.html">x</a><img src="data:image/png;base64,AAAA">
      <object data="chart.svg" type="image/svg+xml"></object><object data="doc.pdf" type="application/pdf"></object><object data="o.png"></object>
      <embed src="e.png" type="image/png"><embed src="doc.pdf">
      <noscript><img src="img/noscript.png"></noscript><template><img src="img/template.png"></template>
      <svg><image href="/img/svg.png"/></svg><img src="${PAGE}"></body></html>`;
    // Responsive images and what <style> loads are decided per request (embedded-plan.ts).
    expect(embeddedResourceUrls(html, PAGE)).toEqual([
      'http://a.localhost:8081/css/site.css',
      'http://a.localhost:8081/f.woff2',
      'http://a.localhost:8081/docs/app.js',
      'http://a.localhost:8081/docs/img/plain.png',
      'http://a.localhost:8081/docs/img/c.png',
      'http://a.localhost:8081/docs/go.png',
      'http://a.localhost:8081/docs/poster.jpg',
      'http://a.localhost:8081/img/svg.png',
    ]);
  });

  it('resolves against <base href>', () => {
    expect(embeddedResourceUrls('<base href="http://c.localhost:9/x/"><img src="y.png">', PAGE)).toEqual(['http://c.localhost:9/x/y.png']);
  });
});

describe('negotiation', () => {
  it('recognises a batch request by Accept, with a non-zero quality', () => {
    expect(acceptsBatch('application/vnd.webpp.batch, text/html;q=0.9')).toBe(true);
    expect(acceptsBatch('text/html, application/vnd.webpp.batch;q=0')).toBe(false);
    expect(acceptsBatch('text/html,*/*')).toBe(false);
    expect(acceptsBatch(undefined)).toBe(false);
  });

  it('prefers brotli, then gzip, honouring q=0 and *', () => {
    expect(chooseEncoding('gzip, deflate, br')).toBe('br');
    expect(chooseEncoding('gzip, br;q=0')).toBe('gzip');
    expect(chooseEncoding('*')).toBe('br');
    expect(chooseEncoding('identity')).toBe('identity');
    expect(chooseEncoding(undefined)).toBe('identity');
  });

  it('knows text from already-compressed media', () => {
    for (const type of ['text/html; charset=utf-8', 'text/css', 'application/javascript', 'image/svg+xml', 'application/json']) {
      expect(isCompressible(type)).toBe(true);
    }
    for (const type of ['image/png', 'image/jpeg', 'font/woff2', 'video/mp4', undefined]) expect(isCompressible(type)).toBe(false);
  });
});
