#!/usr/bin/env node
// `npm run bench [filter]`: runs every benchmark file of the repo, one after another.
// A benchmark is any `bench/*.bench.ts` or `bench/*.bench.mjs` file under packages/*,
// origin, sw, e2e or examples/*. Each one prints its own report and writes its figures
// under docs/benchmarks/. Benchmarks report ratios against a baseline measured in the
// same run, because these machines are shared and noisy.
import { readdirSync, existsSync } from 'node:fs';
import { join, relative } from 'node:path';
import { spawnSync } from 'node:child_process';

const root = new URL('..', import.meta.url).pathname;
const filter = process.argv[2];
// Anything after the filter goes to each benchmark (`npm run bench evaluation -- --runs 3`).
const benchArgs = process.argv.slice(3);

function benchDirs() {
  const dirs = ['origin', 'sw', 'e2e'];
  for (const group of ['packages', 'examples']) {
    const groupDir = join(root, group);
    if (!existsSync(groupDir)) continue;
    for (const entry of readdirSync(groupDir, { withFileTypes: true })) {
      if (entry.isDirectory()) dirs.push(join(group, entry.name));
    }
  }
  return dirs.map((dir) => join(root, dir, 'bench')).filter((dir) => existsSync(dir));
}

const files = benchDirs()
  .flatMap((dir) => readdirSync(dir).filter((name) => /\.bench\.(ts|mjs)$/.test(name)).map((name) => join(dir, name)))
  .filter((file) => !filter || relative(root, file).includes(filter)) // relative: the checkout's own path must not match
  .sort();

if (files.length === 0) {
  console.error(filter ? `No benchmark matches "${filter}".` : 'No benchmarks found.');
  process.exit(1);
}

let failed = 0;
for (const file of files) {
  console.log(`\n=== ${relative(root, file)} ===`);
  const result = spawnSync(process.execPath, ['--import', 'tsx', file, ...benchArgs], { stdio: 'inherit', cwd: root });
  if (result.status !== 0) {
    failed += 1;
    console.error(`benchmark failed: ${relative(root, file)} (exit ${result.status})`);
  }
}
process.exit(failed === 0 ? 0 : 1);
