/**
 * Bindings codec benchmark (docs/protocol.md, "Measurements"): header size for a page with
 * 200 links over 3 servers, uncompressed and compressed, and encode/decode time.
 * Sizes are deterministic. Times are medians over many iterations, reported with a baseline
 * measured in the same run (JSON.stringify/parse of the same bindings written out in full,
 * the paper's inline form), because the machine is shared and noisy.
 *
 * Run: npm run bench codec   (or: node --import tsx packages/core/bench/codec.bench.ts)
 * Writes docs/benchmarks/codec.json.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { decodeBindings, encodeBindings, type Binding, type BindingsDocument } from '../src/index.js';

const SERVERS = ['http://a.localhost:8081', 'http://b.localhost:8082', 'http://c.localhost:8083'];
const LINKS = 200;
const WARMUP = 200;
const ITERATIONS = Number(process.env.CODEC_BENCH_ITERATIONS ?? 2000);

/** A plausible page: articles, images, scripts and styles, every one replicated on the 3 servers. */
function page(): BindingsDocument {
  const kinds = ['/articles/2024/%d/index.html', '/images/gallery/photo-%d.jpg', '/static/js/chunk-%d.js', '/static/css/part-%d.css'];
  const bindings: Binding[] = [];
  for (let i = 0; i < LINKS; i++) {
    const path = kinds[i % kinds.length]!.replace('%d', String(1000 + i));
    bindings.push({ logical: SERVERS[0] + path, prefix: false, replicas: SERVERS.map((server) => server + path) });
  }
  return { directoryVersion: 42, bindings };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** Median microseconds per call. */
function time(run: () => unknown): number {
  for (let i = 0; i < WARMUP; i++) run();
  const samples: number[] = [];
  for (let i = 0; i < ITERATIONS; i++) {
    const start = process.hrtime.bigint();
    run();
    samples.push(Number(process.hrtime.bigint() - start) / 1000);
  }
  return median(samples);
}

const document = page();
const plain = encodeBindings(document, { compression: 'never', maxBytes: 1 << 20 });
const packed = encodeBindings(document, { compression: 'always', maxBytes: 1 << 20 });
const auto = encodeBindings(document);
const inline = JSON.stringify(document.bindings.map((b) => [b.logical, ...b.replicas]));

for (const value of [plain.value, packed.value, auto.value]) {
  const result = decodeBindings(value);
  if (!result.ok || result.document.bindings.length !== LINKS) throw new Error('codec benchmark: round trip failed');
}

const timesUs = {
  baselineStringifyInline: time(() => JSON.stringify(document.bindings.map((b) => [b.logical, ...b.replicas]))),
  baselineParseInline: time(() => JSON.parse(inline)),
  encodeUncompressed: time(() => encodeBindings(document, { compression: 'never', maxBytes: 1 << 20 })),
  encodeCompressed: time(() => encodeBindings(document, { compression: 'always', maxBytes: 1 << 20 })),
  encodeAuto: time(() => encodeBindings(document)),
  decodeUncompressed: time(() => decodeBindings(plain.value)),
  decodeCompressed: time(() => decodeBindings(packed.value)),
};

const report = {
  generatedAt: new Date().toISOString(),
  node: process.version,
  page: { links: LINKS, servers: SERVERS.length, directoryVersion: document.directoryVersion },
  sizesBytes: {
    inlineFullUrlsJson: inline.length,
    uncompressed: plain.value.length,
    compressed: packed.value.length,
    auto: auto.value.length,
    autoCompressed: auto.compressed,
    droppedAtDefaultBudget: auto.droppedBindings,
  },
  ratios: {
    uncompressedVsInline: round(plain.value.length / inline.length),
    compressedVsInline: round(packed.value.length / inline.length),
    compressedVsUncompressed: round(packed.value.length / plain.value.length),
    encodeAutoVsBaselineStringify: round(timesUs.encodeAuto / timesUs.baselineStringifyInline),
    decodeCompressedVsBaselineParse: round(timesUs.decodeCompressed / timesUs.baselineParseInline),
  },
  medianMicroseconds: Object.fromEntries(Object.entries(timesUs).map(([key, us]) => [key, round(us)])),
  iterations: ITERATIONS,
};

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}

console.log(`bindings header for ${LINKS} links over ${SERVERS.length} servers`);
console.table({
  'inline full URLs (JSON, baseline)': { bytes: inline.length },
  'webpp uncompressed (1.j)': { bytes: plain.value.length },
  'webpp compressed (1.z)': { bytes: packed.value.length },
  'webpp auto (default budget 8 KiB)': { bytes: auto.value.length },
});
console.table(Object.fromEntries(Object.entries(timesUs).map(([key, us]) => [key, { 'median µs': round(us) }])));
console.table(report.ratios);

const out = join(dirname(fileURLToPath(import.meta.url)), '../../../docs/benchmarks/codec.json');
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, `${JSON.stringify(report, null, 2)}\n`);
console.log(`wrote ${out}`);
