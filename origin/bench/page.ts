/** Synthetic pages for the pre-processing benchmark: realistic mixes of references. */

export const benchDirectory = {
  formatVersion: 1 as const,
  entries: [
    { logical: '/images/*', servers: ['http://a.localhost:8081', 'http://b.localhost:8082', 'http://c.localhost:8083'] },
    { logical: '/css/site.css', servers: ['http://a.localhost:8081', 'http://b.localhost:8082'] },
    { logical: '/js/app.js', servers: ['http://a.localhost:8081', 'http://c.localhost:8083'] },
    ...Array.from({ length: 200 }, (_, i) => ({ logical: `/docs/page-${i}.html`, servers: ['http://b.localhost:8082'] })),
  ],
};

/** An HTML page of about `bytes` bytes: head with style sheet, script, icons; body of articles with images and links. */
export function benchPage(bytes: number): string {
  const head = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Benchmark page</title>
<link rel="stylesheet" href="/css/site.css"><link rel="icon" href="/images/favicon.ico">
<link rel="preload" href="/fonts/body.woff2" as="font"><script src="/js/app.js" defer></script>
<style>.hero { background: url(/images/hero.jpg) }</style></head><body>\n`;
  const parts = [head];
  let size = head.length;
  for (let i = 0; size < bytes - 20; i += 1) {
    const article = `<article class="post" style="background-image: url('/images/bg-${i % 13}.png')">
<h2><a href="/docs/page-${i % 250}.html">Article ${i}</a></h2>
<img src="/images/photo-${i}.jpg" srcset="/images/photo-${i}@2x.jpg 2x, /images/photo-${i}@3x.jpg 3x" alt="photo ${i}">
<p>Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua.
Ut enim ad minim veniam, quis nostrud <a href="https://example.org/ref/${i}">exercitation</a> ullamco laboris.</p>
<video poster="/images/poster-${i % 5}.jpg"><source src="/media/clip-${i % 5}.mp4" type="video/mp4"></video>
</article>\n`;
    parts.push(article);
    size += article.length;
  }
  parts.push('</body></html>\n');
  return parts.join('');
}
