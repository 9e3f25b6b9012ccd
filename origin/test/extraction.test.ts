/**
 * Precise extraction (issue 12 §5): what the header binds, and which references a batch
 * takes as fetched (CSS-discovered resources, the one responsive-image candidate the
 * client hints pick).
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { htmlReferences, pageReferences } from '../src/bindings/html-references.js';
import { cssFacts } from '../src/bindings/css-syntax.js';
import { cssReferences } from '../src/bindings/css-references.js';
import { chooseImage, readClientHints, type ClientHints } from '../src/batch/client-hints.js';
import { stylesheetResources } from '../src/batch/stylesheet-resources.js';
import { analyzePage, MAX_SHEETS, planEmbedded } from '../src/batch/embedded-plan.js';

const PAGE = 'http://a.localhost:8081/dir/page.html';
const at = (path: string) => `http://a.localhost:8081${path}`;

describe('bindings header references', () => {
  it('leaves out <noscript>, <template>, comments, script strings and preconnect origins; keeps <object data>', () => {
    const html = `<head><link rel="preconnect" href="https://fonts.localhost"><link rel="dns-prefetch" href="//cdn.localhost">
      <noscript><link rel="stylesheet" href="/noscript.css"></noscript></head><body>
      <noscript><img src="/noscript.png"></noscript><template><img src="/template.png"><a href="/t.html"></a></template>
      <!-- <img src="/commented.png"> --><script>var u = "/js-string.png"; // <img src="/in-script.png"></script>
      <object data="/chart.svg" type="image/svg+xml"></object><img src="/kept.png"></body>`;
    expect(htmlReferences(html, PAGE).urls).toEqual([at('/chart.svg'), at('/kept.png')]);
  });

  it('reads CSS with a parser: no url( inside strings or comments, image-set() strings, no @namespace', () => {
    const css = `@namespace svg url(http://www.w3.org/2000/svg); a::after { content: "url(/not-a-ref.png)" }
      b { background: image-set("/one.png" 1x, url(/two.png) 2x) } /* url(/commented.png) */ i { cursor: url('/c.cur'), auto }
      s { content: "/* " } u { background: url(/after-string-comment.png) }`;
    expect(cssReferences(css)).toEqual(['/one.png', '/two.png', '/c.cur', '/after-string-comment.png']);
  });
});

describe('style sheet facts', () => {
  it('name the same references as the bindings path (tokens) for the fixture style sheets', () => {
    const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'e2e', 'fixtures', 'real-world');
    const sheets = ['static/css/main.css', 'static/css/code.css', 'marketing/css/marketing.css', 'vendor/bootstrap.min.css', 'trap/css/trap.css'];
    for (const sheet of sheets) {
      const css = readFileSync(join(root, sheet), 'utf8');
      expect(cssFacts(css).references, sheet).toEqual(cssReferences(css));
      expect(cssReferences(css).length, sheet).toBeGreaterThan(0);
    }
  });

  it('takes the first @font-face src the browser supports, and its unicode-range', () => {
    const [face] = cssFacts(`@font-face { font-family: "Open Sans"; src: local("Open Sans"), url(f.eot) format("embedded-opentype"),
      url(f.woff2) format("woff2"), url(f.woff) format("woff"); unicode-range: U+0000-00FF, U+04?? }`).fontFaces;
    expect(face).toEqual({ family: 'open sans', url: 'f.woff2', ranges: [[0, 0xff], [0x400, 0x4ff]] });
  });

  it('fetches backgrounds of rules the page can match, fonts its rules use and its text needs', () => {
    const sheet = {
      baseUrl: at('/css/site.css'),
      facts: cssFacts(`
        @font-face { font-family: Brand; src: url(brand.woff2) format("woff2") }
        @font-face { font-family: Brand; src: url(brand-cyrillic.woff2); unicode-range: U+0400-045F }
        @font-face { font-family: Unused; src: url(unused.woff2) }
        .hero { background: url(hero.jpg); font: bold 2rem/1.2 Brand, sans-serif }
        .hero:hover { background-image: url(hover.jpg) }
        .absent { background: url(absent.png) } #logo, .nothing { background: url(logo.svg) }
        @media print { .hero { background: url(print.png) } }
        @media (min-width: 40em) { nav a[href] { background: url(arrow.svg) } }`),
    };
    const page = pageReferences('<nav id="logo"><a href="/">Home</a></nav><div class="hero">Hello</div>', PAGE).page;
    expect(stylesheetResources([sheet], page)).toEqual([at('/css/brand.woff2'), at('/css/hero.jpg'), at('/css/logo.svg'), at('/css/arrow.svg')]);
  });
});

describe('responsive images from client hints', () => {
  const choiceOf = (html: string) => pageReferences(html, PAGE).page.imageChoices[0]!;
  const hints = (dpr: number, viewportWidthPx?: number): ClientHints => ({ dpr, viewportWidthPx });

  it('picks by density as Chromium does, and nothing without hints', () => {
    const choice = choiceOf('<img src="a.png" srcset="a-2x.png 2x, a-3x.png 3x">');
    expect(chooseImage(choice, hints(1))).toBe(at('/dir/a.png'));
    expect(chooseImage(choice, hints(2))).toBe(at('/dir/a-2x.png'));
    expect(chooseImage(choice, hints(2.6))).toBe(at('/dir/a-3x.png'));
    expect(chooseImage(choice, undefined)).toBeUndefined();
  });

  it('picks by width from sizes and the viewport width', () => {
    const choice = choiceOf('<img srcset="s.jpg 400w, m.jpg 800w, l.jpg 1600w" sizes="(max-width: 600px) 100vw, 50vw">');
    expect(chooseImage(choice, hints(1, 1280))).toBe(at('/dir/m.jpg'));
    expect(chooseImage(choice, hints(2, 1280))).toBe(at('/dir/l.jpg'));
    expect(chooseImage(choice, hints(1, 375))).toBe(at('/dir/s.jpg'));
    // A vw size needs the viewport width.
    expect(chooseImage(choice, hints(1))).toBeUndefined();
    expect(chooseImage(choiceOf('<img srcset="s.jpg 400w" sizes="calc(100vw - 2rem)">'), hints(1, 1280))).toBeUndefined();
  });

  it('takes the first <source> of a <picture> whose type is supported and media matches', () => {
    const choice = choiceOf(`<picture><source type="image/x-unknown" srcset="x.img"><source media="(min-width: 1000px)" srcset="wide.webp">
      <source srcset="narrow.webp 1x, narrow-2x.webp 2x" type="image/webp"><img src="fallback.jpg"></picture>`);
    expect(chooseImage(choice, hints(1, 1280))).toBe(at('/dir/wide.webp'));
    expect(chooseImage(choice, hints(2, 800))).toBe(at('/dir/narrow-2x.webp'));
    expect(chooseImage(choiceOf('<picture><source media="(orientation: portrait)" srcset="p.jpg"><img src="f.jpg"></picture>'), hints(1, 800))).toBeUndefined();
  });

  it('reads Sec-CH-DPR and Sec-CH-Viewport-Width', () => {
    expect(readClientHints({ 'sec-ch-dpr': '2', 'sec-ch-viewport-width': '1280' })).toEqual({ dpr: 2, viewportWidthPx: 1280 });
    expect(readClientHints({ 'sec-ch-viewport-width': '1280' })).toBeUndefined();
    expect(readClientHints({ 'sec-ch-dpr': 'x' })).toBeUndefined();
  });
});

describe('following style sheets is bounded', () => {
  it('reads at most MAX_SHEETS sheets, however many a page links and imports', async () => {
    const links = Array.from({ length: 40 }, (_, i) => `<link rel="stylesheet" href="/s${i}.css">`).join('');
    const analysis = analyzePage(pageReferences(`<head>${links}</head><body class="x">text</body>`, PAGE));
    const read: string[] = [];
    const plan = await planEmbedded(analysis, PAGE, undefined, async (url) => {
      read.push(url);
      // Every sheet imports two more, and names a background for the page.
      const css = `@import "${url}-a.css"; @import "${url}-b.css"; .x { background: url(${url}.png) }`;
      return { facts: { baseUrl: url, facts: cssFacts(css) }, body: url };
    });
    expect(read).toHaveLength(MAX_SHEETS);
    expect(new Set(read).size).toBe(MAX_SHEETS);
    expect(plan.sheetBodies.size).toBe(MAX_SHEETS);
    // The 40 linked sheets are still sent (the browser loads them), and the backgrounds of those read.
    expect(plan.urls.filter((url) => /\/s\d+\.css$/.test(url))).toHaveLength(40);
    expect(plan.urls.filter((url) => url.endsWith('.css.png'))).toHaveLength(MAX_SHEETS);
  });
});
