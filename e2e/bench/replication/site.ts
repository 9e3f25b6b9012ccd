/**
 * The replication bench's site: pages that embed a stylesheet, a script and images, drawn
 * from shared pools with Zipf popularity (a few images are on most pages, as logos and
 * icons are), and a Zipf choice of page per visit. Seeded: the same site and workload in
 * every run. Everything is written into the home server's folder only (the co-ops start
 * empty: "started cold").
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createRandom } from '@webpp/netem';

export interface SitePage {
  path: string;
  embeds: string[];
}

export interface Site {
  pages: SitePage[];
  sizes: Map<string, number>;
  /** Zipf(s) page chooser over the pages, most popular first. */
  pickPage(random: () => number): SitePage;
}

/** Cumulative Zipf weights 1/rank^s (Breslau et al. 1999 measured s ≈ 0.6–0.8 for web requests; DCWS used a skewed trace). */
function zipfChooser<T>(items: readonly T[], s: number): (random: () => number) => T {
  const cumulative: number[] = [];
  let total = 0;
  for (let rank = 1; rank <= items.length; rank += 1) cumulative.push((total += 1 / rank ** s));
  return (random) => {
    const x = random() * total;
    const index = cumulative.findIndex((value) => value >= x);
    return items[index < 0 ? items.length - 1 : index] as T;
  };
}

export async function writeSite(root: string, seed: number, counts = { pages: 12, images: 40, scripts: 8, styles: 4, imagesPerPage: 5 }): Promise<Site> {
  const random = createRandom(seed);
  const sizes = new Map<string, number>();
  await mkdir(join(root, 'img'), { recursive: true });
  await mkdir(join(root, 'js'), { recursive: true });
  await mkdir(join(root, 'css'), { recursive: true });
  const write = async (path: string, sizeBytes: number, fill: string): Promise<void> => {
    sizes.set(path, sizeBytes);
    await writeFile(join(root, path), Buffer.alloc(sizeBytes, fill));
  };
  const images = Array.from({ length: counts.images }, (_, i) => `/img/i${i}.png`);
  const scripts = Array.from({ length: counts.scripts }, (_, i) => `/js/a${i}.js`);
  const styles = Array.from({ length: counts.styles }, (_, i) => `/css/s${i}.css`);
  for (const path of images) await write(path, 2048 + Math.floor(random() * 30_000), 'i');
  for (const path of scripts) await write(path, 4096 + Math.floor(random() * 16_000), '/');
  for (const path of styles) await write(path, 1024 + Math.floor(random() * 6000), ' ');
  const pickImage = zipfChooser(images, 0.9);
  const pickScript = zipfChooser(scripts, 0.9);
  const pickStyle = zipfChooser(styles, 0.9);
  const pages: SitePage[] = [];
  for (let i = 0; i < counts.pages; i += 1) {
    const embeds = new Set<string>([pickStyle(random), pickScript(random)]);
    while (embeds.size < 2 + counts.imagesPerPage) embeds.add(pickImage(random));
    const path = `/p${i}.html`;
    const html =
      `<!doctype html><html><head><title>page ${i}</title>` +
      [...embeds].filter((e) => e.endsWith('.css')).map((e) => `<link rel="stylesheet" href="${e}">`).join('') +
      [...embeds].filter((e) => e.endsWith('.js')).map((e) => `<script src="${e}"></script>`).join('') +
      `</head><body><h1>Page ${i}</h1>` +
      [...embeds].filter((e) => e.endsWith('.png')).map((e) => `<img src="${e}" alt="">`).join('') +
      `<p>${'text '.repeat(200)}</p></body></html>`;
    await writeFile(join(root, path), html);
    sizes.set(path, Buffer.byteLength(html));
    pages.push({ path, embeds: [...embeds] });
  }
  const pickPage = zipfChooser(pages, 0.8);
  return { pages, sizes, pickPage };
}
