// What a bundled worker script is made of: its bytes per TypeScript source and per package,
// read from the build's own output and its source map (sw/build.mjs chains esbuild's and
// terser's maps). "gzip B" is the marginal cost: gzip(script) − gzip(script without that
// source's bytes), level 9, so the shares overlap and do not add up exactly.
//
//   npm run build && node scripts/bundle-composition.mjs [sw/bundle/webpp-sw.js] [rows]
import { readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { gzipSync } from 'node:zlib';

const file = process.argv[2] ?? 'sw/bundle/webpp-sw.js';
const rows = Number(process.argv[3] ?? 40);
const code = readFileSync(file, 'utf8');
const map = new SourceMap(JSON.parse(readFileSync(`${file}.map`, 'utf8')));

/** The source of every character of the script (the mapping at or before it). */
const owners = [];
const lines = code.split('\n');
for (let line = 0; line < lines.length; line++) {
  for (let column = 0; column <= lines[line].length; column++) {
    const entry = map.findEntry(line, column);
    owners.push((entry.originalSource ?? '(unmapped)').replace(/^.*?node_modules\//, 'node_modules/').replace(/^(\.\.\/)+/, '').replace(/^src\//, 'sw/src/'));
  }
}
const packageOf = (source) => {
  const parts = source.split('/');
  if (parts[0] === 'node_modules') return parts[1].startsWith('@') ? `${parts[1]}/${parts[2]}` : parts[1];
  return parts[0] === 'packages' ? `packages/${parts[1]}` : parts[0];
};
const total = gzipSync(code, { level: 9 }).length;
const marginal = (keep) => total - gzipSync(owners.reduce((text, owner, index) => (keep(owner) ? text : text + code[index]), ''), { level: 9 }).length;
const tally = (keyOf) => {
  const bytes = new Map();
  for (const owner of owners) bytes.set(keyOf(owner), (bytes.get(keyOf(owner)) ?? 0) + 1);
  return [...bytes].sort((a, b) => b[1] - a[1]);
};
const percent = (bytes) => `${((100 * bytes) / code.length).toFixed(1)} %`;

console.log(`${file}: ${code.length} B minified, ${total} B gzip (level 9)\n`);
console.log('| package | minified B | share | gzip B (marginal) |\n|---|---:|---:|---:|');
for (const [name, bytes] of tally(packageOf)) console.log(`| ${name} | ${bytes} | ${percent(bytes)} | ${marginal((owner) => packageOf(owner) === name)} |`);
console.log('\n| source | minified B | share | gzip B (marginal) |\n|---|---:|---:|---:|');
for (const [name, bytes] of tally((owner) => owner).slice(0, rows)) console.log(`| ${name} | ${bytes} | ${percent(bytes)} | ${marginal((owner) => owner === name)} |`);
