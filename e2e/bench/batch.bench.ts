/**
 * Batch transmission benchmark (issue 6; Web++ paper Section 3.4 reports a further 40-52 %
 * shorter response time on a fast line): page load time (the `load` event, and Largest
 * Contentful Paint) of a page with 30 embedded resources, batched versus unbatched, over
 * HTTP/1.1 and over HTTP/2 (TLS on loopback, self-signed certificate made here with the
 * openssl CLI), at 50 ms and 150 ms emulated round-trip time.
 *
 * Everything is real: the @webpp/origin plugin (batching on, or off for the baseline), the
 * bundled worker in Debian's Chromium. Both modes run the same worker; unbatched means the
 * origin answers plain pages, so the worker fetches each resource through normal replica
 * selection. The round-trip time comes from a TCP delay line in front of each server (each
 * byte takes RTT/2 each way; a new connection costs one RTT before its first byte): unlike
 * @webpp/netem's HTTP-aware proxy it carries TLS and HTTP/2, so all four cells share one
 * delay model.
 *
 * Visits: "first" = the worker is installed (a warm-up page without the resources) but no
 * cache holds the resources; "repeat" = the same page again (the resources are cached;
 * they are served with Cache-Control: max-age=0, as @fastify/static does by default, so an
 * unbatched repeat visit revalidates each one).
 *
 * Reports medians of BENCH_SAMPLES (default 7) runs per cell, modes interleaved, and the
 * ratio batched / unbatched measured in the same run. Writes docs/benchmarks/batch.json.
 *
 *   npm run bench batch          (after npm run build)
 */
import { execFileSync } from 'node:child_process';
import { createHash, X509Certificate } from 'node:crypto';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from '@playwright/test';
import { noisePng } from '../support/png.js';
import { Cluster } from '../support/cluster/index.js';
import { chromiumLaunchOptions } from '../support/chromium.js';
import { formatDuration, Progress } from './support/progress.js';

const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 7);
const RTTS_MS = [50, 150];
const PROTOCOLS = ['http/1.1', 'h2'] as const;
const MODES = ['unbatched', 'batched'] as const;
const THUMBNAILS = 27;
/**
 * The page with webpp's page script tag, as every page of a webpp site has it (the worker
 * fetches /webpp.js network-first, and `load` waits for async scripts), and the same page
 * without it (the worker is installed anyway, by the warm-up page): the 30 resources alone.
 */
const PAGE_VARIANTS = [
  { name: 'without page script', path: '/bare.html', pageScript: false },
  { name: 'with page script', path: '/index.html', pageScript: true },
] as const;
type PageVariant = (typeof PAGE_VARIANTS)[number];
const BENCH_DEADLINE_MS = 45 * 60_000;
const repoRoot = new URL('../../', import.meta.url).pathname;

type Protocol = (typeof PROTOCOLS)[number];
type Mode = (typeof MODES)[number];
type Visit = 'first' | 'repeat';

// ---------------------------------------------------------------- the page: 30 resources

/** index.html + 30 embedded resources: a style sheet, a script, a hero image, 27 thumbnails. */
function writeSite(): { root: string; bytes: number } {
  const root = mkdtempSync(join(os.tmpdir(), 'webpp-batch-bench-'));
  mkdirSync(join(root, 'img'));
  let bytes = 0;
  const write = (path: string, body: string | Buffer): void => {
    writeFileSync(join(root, path), body);
    bytes += Buffer.byteLength(body);
  };
  write('style.css', `body{font-family:sans-serif;margin:0}.hero{width:480px;height:320px;display:block}.thumbs img{width:48px;height:36px}\n${'.x{margin:0 auto;padding:1px}\n'.repeat(150)}`);
  write('app.js', `window.appLoaded=true;\n${'/* app code */ function f(a){return a+1}\n'.repeat(150)}`);
  write('img/hero.png', noisePng(240, 160));
  for (let i = 0; i < THUMBNAILS; i++) write(`img/t${i}.png`, noisePng(48, 36));
  const thumbs = Array.from({ length: THUMBNAILS }, (_, i) => `<img src="img/t${i}.png" alt="">`);
  const half = Math.ceil(THUMBNAILS / 2);
  for (const variant of PAGE_VARIANTS) {
    writeFileSync(
      join(root, variant.path.slice(1)),
      `<!doctype html><html><head><meta charset="utf-8"><title>bench</title>${variant.pageScript ? '<script src="/webpp.js" async></script>' : ''}
<link rel="stylesheet" href="style.css"><script src="app.js" defer></script></head>
<body><h1>Gallery</h1><div class="thumbs">${thumbs.slice(0, half).join('')}</div><img class="hero" src="img/hero.png" alt="">
<div class="thumbs">${thumbs.slice(half).join('')}</div></body></html>`,
    );
  }
  writeFileSync(join(root, 'warmup.html'), '<!doctype html><html><head><script src="/webpp.js" async></script></head><body>warm-up</body></html>');
  return { root, bytes };
}

// ---------------------------------------------------------------- RTT emulation

// ---------------------------------------------------------------- servers

interface Tls {
  key: Buffer;
  cert: Buffer;
  spkiSha256: string;
}

/** A throw-away self-signed certificate for a.localhost, made with the openssl CLI. */
function makeCertificate(): Tls {
  const dir = mkdtempSync(join(os.tmpdir(), 'webpp-bench-tls-'));
  try {
    execFileSync('openssl', [
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
      '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'), '-days', '1',
      '-subj', '/CN=a.localhost', '-addext', 'subjectAltName=DNS:a.localhost,DNS:localhost,IP:127.0.0.1',
    ], { stdio: 'ignore' });
    const key = readFileSync(join(dir, 'key.pem'));
    const cert = readFileSync(join(dir, 'cert.pem'));
    const spki = new X509Certificate(cert).publicKey.export({ type: 'spki', format: 'der' });
    return { key, cert, spkiSha256: createHash('sha256').update(spki).digest('base64') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

interface Origin {
  url: string;
  cluster: Cluster;
  /** Requests that reached the server over the network (HTTP/2 streams included). */
  requestCount(): number;
  close(): Promise<void>;
}

/**
 * One real origin (the shared test cluster, one replica) behind a TCP delay line of rttMs:
 * protocol-agnostic, so HTTP/1.1 and TLS + HTTP/2 cross the same emulated link.
 */
async function startOrigin(root: string, protocol: Protocol, mode: Mode, rttMs: number, tls: Tls): Promise<Origin> {
  const cluster = await Cluster.start({
    root,
    names: ['a'],
    delaysMs: { a: rttMs },
    tcpLink: true,
    ...(protocol === 'h2' ? { tls: { key: tls.key, cert: tls.cert } } : {}),
    // Pages carry the tag or not as written (the bare variant must stay bare).
    origin: { batch: mode === 'batched', injectScript: false },
  });
  return {
    url: cluster.logicalOrigin,
    cluster,
    requestCount: () => cluster.primary.log.length,
    close: () => cluster.stop(),
  };
}

// ---------------------------------------------------------------- measuring

interface Sample {
  loadMs: number;
  lcpMs: number;
  images: number;
  brokenImages: number;
}

/** Records Largest Contentful Paint candidates from the start of every page. */
const LCP_OBSERVER = `(() => {
  window.__lcpMs = 0;
  try {
    new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) window.__lcpMs = entry.startTime;
    }).observe({ type: 'largest-contentful-paint', buffered: true });
  } catch {}
})();`;

async function measure(page: Page, url: string): Promise<Sample> {
  await page.goto(url, { waitUntil: 'load', timeout: 60_000 });
  // LCP candidates can still come after load (late image decodes): a short, bounded settle.
  await page.waitForTimeout(300);
  return page.evaluate(() => {
    const navigation = performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming;
    const images = [...document.images];
    return {
      loadMs: navigation.loadEventEnd - navigation.startTime,
      lcpMs: (window as unknown as { __lcpMs: number }).__lcpMs,
      images: images.length,
      brokenImages: images.filter((image) => !image.complete || image.naturalWidth === 0).length,
    };
  });
}

/** One run: a fresh profile, the worker installed, then the first and the repeat visit. */
async function run(browser: Browser, origin: Origin, variant: PageVariant): Promise<Record<Visit, Sample>> {
  const context = await browser.newContext({ serviceWorkers: 'allow' });
  try {
    await context.addInitScript(LCP_OBSERVER);
    const page = await context.newPage();
    await page.goto(`${origin.url}/warmup.html`, { timeout: 60_000 });
    await page.waitForFunction(() => navigator.serviceWorker.controller !== null, undefined, { timeout: 60_000 });
    const first = await measure(page, `${origin.url}${variant.path}`);
    // Let the batch finish landing in the logical cache before the repeat visit.
    await page.waitForTimeout(500);
    const repeat = await measure(page, `${origin.url}${variant.path}`);
    return { first, repeat };
  } finally {
    await context.close();
  }
}

function quantile(sorted: number[], q: number): number {
  const position = (sorted.length - 1) * q;
  const low = Math.floor(position);
  const high = Math.ceil(position);
  return sorted[low]! + (sorted[high]! - sorted[low]!) * (position - low);
}

function summary(values: number[]): { medianMs: number; p25Ms: number; p75Ms: number; samplesMs: number[] } {
  const sorted = [...values].sort((a, b) => a - b);
  const round = (value: number): number => Math.round(value * 10) / 10;
  return { medianMs: round(quantile(sorted, 0.5)), p25Ms: round(quantile(sorted, 0.25)), p75Ms: round(quantile(sorted, 0.75)), samplesMs: values.map(round) };
}

// ---------------------------------------------------------------- main

const startedAt = Date.now();
const { root, bytes } = writeSite();
const tls = makeCertificate();
const browser = await chromium.launch({
  ...chromiumLaunchOptions,
  // The bench only: trust the throw-away certificate for TLS on loopback.
  args: [...(chromiumLaunchOptions.args ?? []), `--ignore-certificate-errors-spki-list=${tls.spkiSha256}`, '--ignore-certificate-errors'],
});
const chromiumVersion = browser.version();

interface Cell {
  page: PageVariant['name'];
  protocol: Protocol;
  rttMs: number;
  visit: Visit;
  mode: Mode;
  loadMs: ReturnType<typeof summary>;
  lcpMs: ReturnType<typeof summary>;
  requestsPerLoad: number;
}
const cells: Cell[] = [];
// One unit per page run; on a terminal a status line tells which cell runs and the time left.
const progress = new Progress({ title: 'batch', totalUnits: PROTOCOLS.length * RTTS_MS.length * PAGE_VARIANTS.length * SAMPLES * MODES.length });
const groupCount = PROTOCOLS.length * RTTS_MS.length;
let groupIndex = 0;

try {
  for (const protocol of PROTOCOLS) {
    for (const rttMs of RTTS_MS) {
      groupIndex += 1;
      const group = `${protocol} at ${rttMs} ms RTT (${groupIndex}/${groupCount})`;
      const groupStartedMs = Date.now();
      const origins = {} as Record<Mode, Origin>;
      for (const mode of MODES) origins[mode] = await startOrigin(root, protocol, mode, rttMs, tls);
      // Requests that reach each server over the network (its own internal reads are not counted).
      const counted = {
        get unbatched() {
          return origins.unbatched.requestCount();
        },
        get batched() {
          return origins.batched.requestCount();
        },
      } as Record<Mode, number>;
      for (const variant of PAGE_VARIANTS) {
        const samples: Record<Mode, Record<Visit, Sample[]>> = {
          unbatched: { first: [], repeat: [] },
          batched: { first: [], repeat: [] },
        };
        const requestsBefore = { ...counted };
        for (let i = 0; i < SAMPLES; i++) {
          if (Date.now() - startedAt > BENCH_DEADLINE_MS) throw new Error('benchmark deadline exceeded');
          // Interleaved, alternating order: drift on this shared machine hits both modes alike.
          for (const mode of i % 2 === 0 ? MODES : [...MODES].reverse()) {
            progress.step(`${group}, ${variant.name}: sample ${i + 1}/${SAMPLES}, ${mode}`, 1);
            const result = await run(browser, origins[mode], variant);
            for (const visit of ['first', 'repeat'] as const) {
              if (result[visit].brokenImages > 0 || result[visit].images !== THUMBNAILS + 1) {
                throw new Error(`${protocol} ${rttMs} ms ${mode} ${variant.name} ${visit}: page incomplete (${JSON.stringify(result[visit])})`);
              }
              samples[mode][visit].push(result[visit]);
            }
          }
        }
        for (const mode of MODES) {
          for (const visit of ['first', 'repeat'] as const) {
            const list = samples[mode][visit];
            cells.push({
              page: variant.name,
              protocol,
              rttMs,
              visit,
              mode,
              loadMs: summary(list.map((sample) => sample.loadMs)),
              lcpMs: summary(list.map((sample) => sample.lcpMs)),
              // Warm-up page, worker script and both visits, per run.
              requestsPerLoad: Math.round(((counted[mode] - requestsBefore[mode]) / SAMPLES) * 10) / 10,
            });
          }
        }
      }
      for (const mode of MODES) await origins[mode].close();
      const firstVisitRatios = PAGE_VARIANTS.map((variant) => {
        const median = (mode: Mode): number => cells.find((cell) => cell.page === variant.name && cell.protocol === protocol && cell.rttMs === rttMs && cell.visit === 'first' && cell.mode === mode)!.loadMs.medianMs;
        return `${(median('batched') / median('unbatched')).toFixed(2)} ${variant.name}`;
      });
      progress.complete(`${group} done in ${formatDuration(Date.now() - groupStartedMs)}: first-visit load batched ÷ unbatched ${firstVisitRatios.join(', ')}`);
    }
  }
} finally {
  progress.close();
  await browser.close();
  rmSync(root, { recursive: true, force: true });
}

const comparisons = cells
  .filter((cell) => cell.mode === 'batched')
  .map((batched) => {
    const unbatched = cells.find(
      (cell) => cell.mode === 'unbatched' && cell.page === batched.page && cell.protocol === batched.protocol && cell.rttMs === batched.rttMs && cell.visit === batched.visit,
    )!;
    const ratio = (a: number, b: number): number => Math.round((a / b) * 1000) / 1000;
    return {
      page: batched.page,
      protocol: batched.protocol,
      rttMs: batched.rttMs,
      visit: batched.visit,
      unbatchedLoadMs: unbatched.loadMs.medianMs,
      batchedLoadMs: batched.loadMs.medianMs,
      loadRatio: ratio(batched.loadMs.medianMs, unbatched.loadMs.medianMs),
      unbatchedLcpMs: unbatched.lcpMs.medianMs,
      batchedLcpMs: batched.lcpMs.medianMs,
      lcpRatio: ratio(batched.lcpMs.medianMs, unbatched.lcpMs.medianMs),
      unbatchedRequestsPerRun: unbatched.requestsPerLoad,
      batchedRequestsPerRun: batched.requestsPerLoad,
    };
  });

const report = {
  benchmark: 'batch transmission: page load time, batched vs unbatched (e2e/bench/batch.bench.ts)',
  generatedAt: new Date().toISOString(),
  machine: { cpus: os.cpus().length, node: process.version, chromium: chromiumVersion },
  method: {
    samplesPerCell: SAMPLES,
    page: {
      embeddedResources: THUMBNAILS + 3,
      bytes,
      composition: '1 style sheet, 1 script, 1 hero image 240x160, 27 thumbnails 48x36 (noise PNG)',
      variants: 'without page script: the 30 resources only; with page script: plus <script src=/webpp.js async>, fetched network-first by the worker in both modes',
    },
    protocols: 'http/1.1: plain HTTP; h2: TLS 1.3 with a self-signed certificate, the server refuses HTTP/1.1 (allowHTTP1: false), so every h2 load was HTTP/2',
    rtt: 'TCP delay line: RTT/2 each way per byte, +1 RTT before the first byte of each connection; no bandwidth limit',
    visits: {
      first: 'worker installed by a warm-up page; no cache holds the resources',
      repeat: 'the same page again; resources cached, served with Cache-Control: max-age=0',
    },
    metrics: 'load = PerformanceNavigationTiming.loadEventEnd; LCP = last largest-contentful-paint entry; medians (p25/p75 in cells)',
    requestsPerRun: 'HTTP requests (HTTP/2 streams) reaching the server per run: warm-up page, worker scripts, both visits',
  },
  comparisons,
  cells,
};
writeFileSync(join(repoRoot, 'docs/benchmarks/batch.json'), `${JSON.stringify(report, null, 2)}\n`);

console.log('\npage                 protocol  RTT   visit   load unbatched  load batched  ratio   LCP unbatched  LCP batched  ratio   requests/run');
for (const c of comparisons) {
  console.log(
    `${c.page.padEnd(20)} ${c.protocol.padEnd(9)} ${String(c.rttMs).padStart(3)}  ${c.visit.padEnd(6)}  ${String(c.unbatchedLoadMs).padStart(10)} ms  ${String(c.batchedLoadMs).padStart(9)} ms  ${c.loadRatio.toFixed(2)}  ${String(c.unbatchedLcpMs).padStart(10)} ms  ${String(c.batchedLcpMs).padStart(8)} ms  ${c.lcpRatio.toFixed(2)}  ${c.unbatchedRequestsPerRun} vs ${c.batchedRequestsPerRun}`,
  );
}
console.log('\nwrote docs/benchmarks/batch.json');
