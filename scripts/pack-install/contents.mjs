// What a published tarball must hold, and must not: the checks of the pack-and-install test
// on `npm pack --json` file lists and on the installed packages' source maps.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

/** Paths of the test suite and of development files: never in a tarball. */
const FORBIDDEN = [
  [/(^|\/)(test|tests|__tests__|bench|benchmarks|fixtures|e2e|coverage)\//, 'test suite or bench folder'],
  [/\.(test|spec|bench)\.[cm]?[jt]sx?(\.map)?$/, 'test or bench file'],
  [/\.(test|spec|bench)\.d\.[cm]?ts(\.map)?$/, 'test or bench declarations'],
  [/(^|\/)tsconfig[^/]*\.json$/, 'TypeScript project file'],
  [/\.tsbuildinfo$/, 'TypeScript build info'],
  [/(^|\/)node_modules\//, 'node_modules'],
  [/(^|\/)\.[^/]+$/, 'dotfile'],
  [/\.tgz$/, 'tarball'],
];

/** Every file a package.json field points at: main, types, bin and each exports target. */
export function declaredEntryPoints(manifest) {
  const targets = new Set();
  for (const field of [manifest.main, manifest.types]) if (typeof field === 'string') targets.add(field);
  const bin = typeof manifest.bin === 'string' ? { [manifest.name]: manifest.bin } : (manifest.bin ?? {});
  for (const target of Object.values(bin)) targets.add(target);
  const walk = (value) => {
    if (typeof value === 'string') targets.add(value);
    else if (value && typeof value === 'object') Object.values(value).forEach(walk);
  };
  walk(manifest.exports);
  return [...targets].map((target) => target.replace(/^\.\//, ''));
}

/**
 * Problems with one package's file list (from `npm pack --json`): a promised or declared
 * file missing, or a file of the test suite present. `promised` are paths the docs promise.
 */
export function contentProblems(packedFiles, manifest, promised) {
  const problems = [];
  const files = new Set(packedFiles);
  for (const path of ['package.json', 'README.md', 'CHANGELOG.md', ...promised]) {
    if (!files.has(path)) problems.push(`${path} is missing`);
  }
  for (const target of declaredEntryPoints(manifest)) {
    if (target.includes('*')) {
      const [before, after] = target.split('*');
      if (![...files].some((path) => path.startsWith(before) && path.endsWith(after))) problems.push(`no file matches the export ${target}`);
    } else if (!files.has(target)) {
      problems.push(`${target} (named in package.json) is missing`);
    }
  }
  for (const path of files) {
    const rule = FORBIDDEN.find(([pattern]) => pattern.test(path));
    if (rule) problems.push(`${path} should not be published (${rule[1]})`);
  }
  if (typeof manifest.engines?.node !== 'string') problems.push('package.json has no engines.node');
  if (!Array.isArray(manifest.files)) problems.push('package.json has no files list');
  return problems;
}

/**
 * Problems with the source maps of an installed package: a `sourceMappingURL` naming a
 * missing map, or a map whose sources are neither embedded nor shipped.
 */
export function sourceMapProblems(packageDir) {
  const problems = [];
  for (const file of listFiles(packageDir)) {
    const path = join(packageDir, file);
    if (/\.(js|d\.ts)$/.test(file)) {
      const url = /\/\/# sourceMappingURL=(\S+)\s*$/.exec(readFileSync(path, 'utf8'))?.[1];
      if (url && !url.startsWith('data:') && !existsSync(resolve(dirname(path), url))) problems.push(`${file} names a missing map ${url}`);
    }
    if (!file.endsWith('.map')) continue;
    let map;
    try {
      map = JSON.parse(readFileSync(path, 'utf8'));
    } catch {
      problems.push(`${file} is not JSON`);
      continue;
    }
    const root = resolve(dirname(path), map.sourceRoot ?? '');
    (map.sources ?? []).forEach((source, index) => {
      if (typeof map.sourcesContent?.[index] === 'string') return;
      const target = resolve(root, source);
      if (!target.startsWith(packageDir + sep) || !existsSync(target)) {
        problems.push(`${file} points to ${source}, which is not in the package (stale build output? npm run clean && npm run build)`);
      }
    });
  }
  return problems;
}

function listFiles(dir, base = dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : listFiles(path, base);
    return [relative(base, path).split(sep).join('/')];
  });
}

/** Relative links of a README ([text](path)) that point to no file of the repository. */
export function brokenReadmeLinks(readmePath) {
  const text = readFileSync(readmePath, 'utf8');
  const broken = [];
  for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
    if (/^[a-z]+:/i.test(target) || target.startsWith('#')) continue;
    const path = resolve(dirname(readmePath), target.split('#')[0]);
    if (!existsSync(path)) broken.push(target);
  }
  return broken;
}
