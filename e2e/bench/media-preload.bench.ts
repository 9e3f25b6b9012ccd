/**
 * Media preload through the worker (issue 25, item 8; sw/src/media-range.ts): seconds an
 * <audio> or <video> element has buffered once it stopped loading (network idle), with the
 * worker in control and without it (a context with service workers blocked: the baseline,
 * measured in the same run), when the page's own origin serves the media and when a replica
 * on another origin does. LOADS loads per cell; median and range.
 *
 * Media: a 40 s, 64 kbit/s MP3 (made with ffmpeg, when it is installed; otherwise an 8 kB/s
 * WAV, which Chromium reads differently: the JSON says which) and the 8 s WebM of
 * e2e/fixtures/media. Network: three @webpp/origin replicas on loopback; the serving one at
 * 0 ms, the others 300 ms away.
 *
 *   npm run bench media-preload -- [--loads 5]
 *
 * Writes docs/benchmarks/media-preload.json.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from '@playwright/test';
import { chromiumLaunchOptions } from '../support/chromium.js';
import { Cluster } from '../support/cluster/index.js';
import { openControlled, waitForState } from '../support/webpp-page.js';
import { wav } from '../support/wav.js';

const repoRoot = new URL('../../', import.meta.url).pathname;
const loadsFlag = process.argv.indexOf('--loads');
const LOADS = Math.max(1, loadsFlag < 0 ? 5 : Number(process.argv[loadsFlag + 1]) || 5);
const IDLE_POLL_MS = 750;
const IDLE_POLLS = 30;

/** The audio file: an MP3 by ffmpeg when it is there, else a WAV. */
function writeAudio(root: string): string {
  try {
    execFileSync('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-y', '-f', 'lavfi', '-i', 'sine=frequency=440:duration=40', '-ac', '1', '-b:a', '64k', join(root, 'audio.mp3')]);
    return 'audio.mp3';
  } catch {
    writeFileSync(join(root, 'audio.wav'), wav(40));
    return 'audio.wav';
  }
}

/** The end of the last buffered range once the element is idle and it stopped changing (bounded). */
async function bufferedAtIdle(page: Page): Promise<number> {
  await page.waitForFunction(() => (document.getElementById('m') as HTMLMediaElement).readyState >= 1);
  let last = -1;
  for (let poll = 0; poll < IDLE_POLLS; poll++) {
    await page.waitForTimeout(IDLE_POLL_MS);
    const now = await page.evaluate(() => {
      const media = document.getElementById('m') as HTMLMediaElement;
      return media.networkState === HTMLMediaElement.NETWORK_IDLE && media.buffered.length > 0 ? media.buffered.end(media.buffered.length - 1) : -1;
    });
    if (now === last && now >= 0) break;
    last = now;
  }
  return Math.round(last * 10) / 10;
}

function summary(values: number[]): { values: number[]; median: number; min: number; max: number } {
  const sorted = [...values].sort((a, b) => a - b);
  return { values, median: sorted[Math.floor(sorted.length / 2)]!, min: sorted[0]!, max: sorted.at(-1)! };
}

interface Row {
  servedBy: 'own origin' | 'replica on another origin';
  media: 'audio' | 'video';
  preload: 'metadata' | 'auto';
  durationSeconds: number;
  withoutWorker: ReturnType<typeof summary>;
  throughWorker: ReturnType<typeof summary>;
}

async function main(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'webpp-media-bench-'));
  const audio = writeAudio(root);
  copyFileSync(join(repoRoot, 'e2e/fixtures/media/testsrc-8s.webm'), join(root, 'video.webm'));
  const files = { audio, video: 'video.webm' } as const;
  for (const preload of ['metadata', 'auto'] as const) {
    for (const media of ['audio', 'video'] as const) {
      writeFileSync(
        join(root, `${preload}-${media}.html`),
        `<!doctype html><html><head><meta charset="utf-8"><title>m</title><script src="/webpp.js" async></script></head>` +
          `<body><${media} id="m" controls preload="${preload}" src="${files[media]}"></${media}></body></html>`,
      );
    }
  }
  const browser: Browser = await chromium.launch(chromiumLaunchOptions);
  const rows: Row[] = [];
  try {
    for (const [servedBy, serving, delaysMs] of [
      ['own origin', 'a', { a: 0, b: 300, c: 300 }],
      ['replica on another origin', 'b', { a: 300, b: 0, c: 300 }],
    ] as const) {
      const cluster = await Cluster.start({ root, delaysMs });
      try {
        const origin = cluster.replica(serving).origin;
        for (const media of ['audio', 'video'] as const) {
          for (const preload of ['metadata', 'auto'] as const) {
            const url = cluster.logicalUrl(`/${preload}-${media}.html`);
            const plain: number[] = [];
            for (let load = 0; load < LOADS; load++) {
              const context = await browser.newContext({ serviceWorkers: 'block' });
              const page = await context.newPage();
              await page.goto(url);
              plain.push(await bufferedAtIdle(page));
              await context.close();
            }
            const context = await browser.newContext({ serviceWorkers: 'allow' });
            const page = await context.newPage();
            await openControlled(page, url);
            await waitForState(page, (state) => state.decisions.filter((decision) => decision.logicalUrl.endsWith(`/${files[media]}`)).at(-1)?.servedBy === origin, {
              what: `${media} from ${serving}`,
              timeoutMs: 60_000,
              between: async () => void (await page.reload()),
            });
            const worker: number[] = [];
            for (let load = 0; load < LOADS; load++) {
              await page.reload();
              worker.push(await bufferedAtIdle(page));
            }
            const durationSeconds = Math.round((await page.evaluate(() => (document.getElementById('m') as HTMLMediaElement).duration)) * 10) / 10;
            await context.close();
            const row: Row = { servedBy, media, preload, durationSeconds, withoutWorker: summary(plain), throughWorker: summary(worker) };
            rows.push(row);
            console.log(`${servedBy.padEnd(26)} ${media} preload=${preload.padEnd(8)} without worker ${plain.join(', ')} (median ${row.withoutWorker.median}); through the worker ${worker.join(', ')} (median ${row.throughWorker.median}) of ${durationSeconds} s`);
          }
        }
      } finally {
        await cluster.stop();
      }
    }
  } finally {
    await browser.close();
    rmSync(root, { recursive: true, force: true });
  }
  const out = join(repoRoot, 'docs/benchmarks/media-preload.json');
  writeFileSync(out, `${JSON.stringify({ generatedAt: new Date().toISOString(), loads: LOADS, audioFile: audio, unit: 'buffered seconds at network idle', rows }, null, 2)}\n`);
  console.log(`wrote ${out}`);
}

await main();
