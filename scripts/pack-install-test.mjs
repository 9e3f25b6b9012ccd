#!/usr/bin/env node
// The pack-and-install test (issue 16, part of `npm test`): @webpp/core, @webpp/sw and
// @webpp/origin work as a user gets them from npm. It packs the three packages (after the
// build), checks what the tarballs hold, installs them into a fresh project in the system's
// temporary folder (no workspace links), and there
//   1. runs `npx webpp-origin --help`;
//   2. runs a small Fastify app that registers the plugin and @webpp/origin/batch, and fetches over real HTTP on
//      127.0.0.1 a page whose webpp-bindings header decodes (with the installed @webpp/core),
//      and the page script and worker the origin serves from the installed @webpp/sw;
//   3. bundles a Workbox worker that imports @webpp/sw with esbuild;
//   4. type-checks a TypeScript file that imports the three (types resolved through exports);
//   5. runs `npx webpp-origin build` (static hosting mode) on a small folder;
//   6. runs the code blocks of the README's "Add it to your site" section and of
//      docs/static-hosting.md verbatim (ports aside), as a reader would (pack-install/doc-snippets.mjs).
// The install uses the versions of package-lock.json, so a warm npm cache serves it; without
// the registry or the cache it fails with a message, never hangs. WEBPP_KEEP_PACK_TEST=1
// keeps the temporary folder.
import { createRequire } from 'node:module';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { brokenReadmeLinks, contentProblems, sourceMapProblems } from './pack-install/contents.mjs';
import * as fixtures from './pack-install/fixtures.mjs';
import { run, start } from './pack-install/run.mjs';
import { runDocSnippets } from './pack-install/doc-checks.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const npx = process.platform === 'win32' ? 'npx.cmd' : 'npx';
const INSTALL_TIMEOUT_MS = 120_000;
const STEP_TIMEOUT_MS = 30_000;

/** The packages, and the files their READMEs and the origin promise beyond package.json's entry points. */
const PACKAGES = [
  { dir: 'packages/core', name: '@webpp/core', promised: ['dist/index.js', 'dist/index.d.ts'] },
  { dir: 'sw', name: '@webpp/sw', promised: ['dist/index.js', 'dist/index.d.ts', 'bundle/webpp.js', 'bundle/webpp-sw.js'] },
  { dir: 'origin', name: '@webpp/origin', promised: ['dist/index.js', 'dist/index.d.ts', 'dist/cli.js'] },
];
/** Installed beside the tarballs, at the versions the monorepo locks. */
const PEERS = ['fastify', '@fastify/static', 'esbuild', 'workbox-routing', 'typescript', '@types/node', 'serve'];

const startedMs = performance.now();
let failed = 0;

function report(label, problems) {
  if (problems.length === 0) {
    console.log(`  ok   ${label}`);
    return true;
  }
  failed += 1;
  console.log(`  FAIL ${label}`);
  for (const problem of problems) console.log(`       - ${problem}`);
  return false;
}

/** Stops the test: the temporary folder is still removed (see the end of the file). */
class Fatal extends Error {}
function fatal(message) {
  throw new Fatal(message);
}

/** npm's own settings for the run that started us (npm test) must not leak into the fresh project. */
function cleanEnv() {
  const env = { ...process.env };
  for (const key of Object.keys(env)) {
    if (/^npm_(config|package|lifecycle)_/i.test(key) && !/^npm_config_(cache|registry|userconfig)$/i.test(key)) delete env[key];
  }
  return env;
}

function lockedVersion(name) {
  const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8'));
  const version = lock.packages?.[`node_modules/${name}`]?.version;
  if (typeof version !== 'string') fatal(`package-lock.json does not lock ${name}`);
  return version;
}

console.log('pack-and-install test: @webpp/core, @webpp/sw and @webpp/origin as npm delivers them');
const temp = mkdtempSync(join(tmpdir(), 'webpp-pack-'));
const tarballDir = join(temp, 'tarballs');
const project = join(temp, 'project');
mkdirSync(tarballDir);
mkdirSync(project);
const env = cleanEnv();

try {
  for (const pkg of PACKAGES) {
    for (const file of pkg.promised) {
      if (!existsSync(join(root, pkg.dir, file))) fatal(`${pkg.dir}/${file} is missing: build first (npm run build).`);
    }
  }

  // 1. Pack, and check what each tarball holds.
  const workspaceArgs = PACKAGES.flatMap((pkg) => ['-w', pkg.dir]);
  const packed = await run(npm, ['pack', '--json', '--pack-destination', tarballDir, ...workspaceArgs], { cwd: root, timeoutMs: STEP_TIMEOUT_MS, env });
  if (packed.code !== 0) fatal(`npm pack failed (${packed.timedOut ? 'timed out' : `exit ${packed.code}`}):\n${packed.stderr}`);
  const packs = JSON.parse(packed.stdout);
  const tarballs = [];
  for (const pkg of PACKAGES) {
    const pack = packs.find((entry) => entry.name === pkg.name);
    if (!pack) fatal(`npm pack did not pack ${pkg.name}`);
    tarballs.push(join(tarballDir, pack.filename));
    const manifest = JSON.parse(readFileSync(join(root, pkg.dir, 'package.json'), 'utf8'));
    const files = pack.files.map((file) => file.path);
    report(`${pkg.name}: tarball holds what the docs promise and nothing of the test suite (${files.length} files, ${Math.round(pack.size / 1024)} KiB)`, contentProblems(files, manifest, pkg.promised));
    report(`${pkg.name}: README links resolve in the repository`, brokenReadmeLinks(join(root, pkg.dir, 'README.md')).map((link) => `broken link ${link}`));
  }

  // 2. A fresh project outside the workspace, from the tarballs.
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'webpp-pack-install-test', private: true, type: 'module' }, null, 2));
  const peers = PEERS.map((name) => `${name}@${lockedVersion(name)}`);
  const installArgs = ['install', '--no-audit', '--no-fund', '--prefer-offline', '--fetch-timeout=20000', '--fetch-retries=1', '--fetch-retry-mintimeout=1000', '--fetch-retry-maxtimeout=5000', ...tarballs, ...peers];
  const installed = await run(npm, installArgs, { cwd: project, timeoutMs: INSTALL_TIMEOUT_MS, env });
  if (installed.code !== 0) {
    fatal(
      `npm install in ${project} ${installed.timedOut ? `did not finish within ${INSTALL_TIMEOUT_MS / 1000} s` : `failed (exit ${installed.code})`}. ` +
        `This test installs the packed tarballs with their dependencies (${peers.join(', ')} and those of package-lock.json) ` +
        `from the npm registry or the npm cache: check that ${env.npm_config_registry ?? 'https://registry.npmjs.org/'} is reachable.\n` +
        installed.stderr.split('\n').slice(-15).join('\n'),
    );
  }
  const require = createRequire(join(project, 'package.json'));
  const installedDir = (name) => join(project, 'node_modules', ...name.split('/'));
  const layoutProblems = PACKAGES.flatMap(({ name }) => {
    const dir = installedDir(name);
    if (!existsSync(dir)) return [`${name} is not installed`];
    if (lstatSync(dir).isSymbolicLink() || !realpathSync(dir).startsWith(project + sep)) return [`${name} is a link, not an installed copy`];
    return sourceMapProblems(dir).map((problem) => `${name}: ${problem}`);
  });
  report(`installed from tarballs in ${Math.round((performance.now() - startedMs) / 1000)} s: real copies, source maps complete`, layoutProblems);
  const originManifest = JSON.parse(readFileSync(join(installedDir('@webpp/origin'), 'package.json'), 'utf8'));
  report('@webpp/origin depends on @webpp/sw (whose bundle it serves)', originManifest.dependencies?.['@webpp/sw'] ? [] : ['no dependency on @webpp/sw']);

  // 3. The CLI.
  const help = await run(npx, ['--no-install', 'webpp-origin', '--help'], { cwd: project, timeoutMs: STEP_TIMEOUT_MS, env });
  report('npx webpp-origin --help prints the usage and exits 0', [
    ...(help.code === 0 ? [] : [`exit ${help.timedOut ? 'timeout' : help.code}: ${help.stderr}`]),
    ...(help.stdout.includes('Usage: webpp-origin') ? [] : ['no "Usage: webpp-origin" line']),
  ]);

  // 3b. Static hosting mode: the installed CLI builds a folder with the installed worker.
  mkdirSync(join(project, 'static-site'), { recursive: true });
  writeFileSync(join(project, 'static-site', 'index.html'), '<html><head></head><body><img src="/img/a.png"></body></html>');
  writeFileSync(join(project, 'static-directory.json'), JSON.stringify({ formatVersion: 1, logicalOrigin: 'https://example.github.io', entries: [{ logical: '/img/*', servers: ['https://example.github.io', 'https://mirror.example.net'] }] }));
  const built = await run(npx, ['--no-install', 'webpp-origin', 'build', 'static-site', '--out', 'static-dist', '--directory', 'static-directory.json', '--inject'], { cwd: project, timeoutMs: STEP_TIMEOUT_MS, env });
  const distFile = (...path) => join(project, 'static-dist', ...path);
  const readOr = (path) => (existsSync(path) ? readFileSync(path, 'utf8') : '');
  report('npx webpp-origin build writes _headers, the static bindings file and the installed worker', [
    ...(built.code === 0 ? [] : [`exit ${built.timedOut ? 'timeout' : built.code}: ${built.stderr}`]),
    ...(readOr(distFile('_headers')).includes('webpp-bindings:') ? [] : ['no webpp-bindings in _headers']),
    ...(readOr(distFile('.well-known', 'webpp', 'bindings')).includes('mirror.example.net') ? [] : ['static bindings file missing or without the mirror']),
    ...(readOr(distFile('webpp-sw.js')) === readOr(join(installedDir('@webpp/sw'), 'bundle', 'webpp-sw.js')) && readOr(distFile('webpp-sw.js')) !== '' ? [] : ['webpp-sw.js is not the installed bundle']),
    ...(readOr(distFile('index.html')).includes('<script src="/webpp.js" async></script>') ? [] : ['script tag not injected']),
  ]);

  // 4. The plugin in a Fastify app: a page with bindings, the client scripts from @webpp/sw.
  writeFileSync(join(project, fixtures.APP_FILE), fixtures.appSource);
  const app = await start(process.execPath, [fixtures.APP_FILE], { cwd: project, timeoutMs: STEP_TIMEOUT_MS, env, ready: /listening (http:\/\/127\.0\.0\.1:\d+)/ });
  try {
    const baseUrl = app.match[1];
    const core = await import(pathToFileURL(require.resolve('@webpp/core')).href);
    const page = await fetch(`${baseUrl}/`, { signal: AbortSignal.timeout(STEP_TIMEOUT_MS) });
    const html = await page.text();
    const decoded = core.decodeBindings(page.headers.get(core.BINDINGS_HEADER));
    const logicalUrl = fixtures.PUBLIC_URL + fixtures.BOUND_PATH;
    const binding = decoded.ok ? decoded.document.bindings.find((entry) => (entry.prefix ? logicalUrl.startsWith(entry.logical) : entry.logical === logicalUrl)) : undefined;
    const servers = (binding?.replicas ?? []).map((replica) => new URL(replica).origin).sort();
    report(`the plugin serves a page whose ${core.BINDINGS_HEADER} header decodes to the directory's replicas`, [
      ...(page.status === 200 ? [] : [`GET / answered ${page.status}`]),
      ...(decoded.ok ? [] : [`header does not decode: ${decoded.error.code} ${decoded.error.message}`]),
      ...(decoded.ok && !binding ? [`no binding for ${logicalUrl} in ${JSON.stringify(decoded.document)}`] : []),
      ...(binding && servers.join() !== [fixtures.PUBLIC_URL, fixtures.MIRROR_URL].join() ? [`replicas ${servers.join(', ')}`] : []),
      // @webpp/origin/batch, registered after the plugin, asks the worker for batches.
      ...(html.includes('src="/webpp.js?features=batch"') ? [] : ['the page script tag (with ?features=batch) was not injected']),
      ...((page.headers.get('vary') ?? '').includes('Accept') ? [] : ['no Vary: Accept from @webpp/origin/batch']),
    ]);
    const scriptProblems = [];
    for (const file of ['webpp.js', 'webpp-sw.js']) {
      const response = await fetch(`${baseUrl}/${file}`, { signal: AbortSignal.timeout(STEP_TIMEOUT_MS) });
      const body = Buffer.from(await response.arrayBuffer());
      const expected = readFileSync(join(installedDir('@webpp/sw'), 'bundle', file));
      if (response.status !== 200) scriptProblems.push(`GET /${file} answered ${response.status}: ${body.toString().slice(0, 300)}`);
      else if (!body.equals(expected)) scriptProblems.push(`/${file} is not the installed @webpp/sw bundle`);
    }
    report('the origin serves /webpp.js and /webpp-sw.js from the installed @webpp/sw', scriptProblems);
  } finally {
    await app.stop();
  }

  // 5. A Workbox worker that imports @webpp/sw, bundled with esbuild.
  writeFileSync(join(project, fixtures.WORKER_FILE), fixtures.workerSource);
  writeFileSync(join(project, fixtures.BUILD_FILE), fixtures.buildSource);
  const bundled = await run(process.execPath, [fixtures.BUILD_FILE], { cwd: project, timeoutMs: STEP_TIMEOUT_MS, env });
  const bundleProblems = [];
  if (bundled.code !== 0) bundleProblems.push(`esbuild failed (${bundled.timedOut ? 'timeout' : `exit ${bundled.code}`}): ${bundled.stderr}`);
  else {
    const inputs = JSON.parse(bundled.stdout.trim().split('\n').pop());
    for (const expected of ['node_modules/@webpp/sw/dist/workbox.js', 'node_modules/@webpp/core/dist/index.js', 'node_modules/workbox-routing/registerRoute.js']) {
      if (!inputs.includes(expected)) bundleProblems.push(`the bundle does not include ${expected}`);
    }
    const outside = inputs.filter((input) => input.startsWith('..') || input.startsWith('/'));
    if (outside.length > 0) bundleProblems.push(`the bundle read files outside the project: ${outside.slice(0, 5).join(', ')}`);
    const code = readFileSync(join(project, fixtures.WORKER_BUNDLE_FILE), 'utf8');
    if (!/(class ReplicaStrategy|ReplicaStrategy = class) extends Strategy\b/.test(code)) bundleProblems.push('the bundle holds no ReplicaStrategy (a Workbox Strategy)');
    const syntax = await run(process.execPath, ['--check', fixtures.WORKER_BUNDLE_FILE], { cwd: project, timeoutMs: STEP_TIMEOUT_MS, env });
    if (syntax.code !== 0) bundleProblems.push(`the bundle does not parse: ${syntax.stderr}`);
  }
  report('esbuild bundles a Workbox worker that imports @webpp/sw (the replica strategy inside)', bundleProblems);

  // 6. The published types, as a TypeScript user (module NodeNext) resolves them.
  writeFileSync(join(project, fixtures.TYPES_FILE), fixtures.typesSource);
  writeFileSync(join(project, fixtures.TSCONFIG_FILE), fixtures.tsconfigSource);
  const typed = await run(npx, ['--no-install', 'tsc', '-p', fixtures.TSCONFIG_FILE], { cwd: project, timeoutMs: STEP_TIMEOUT_MS, env });
  report('TypeScript finds the types of the three packages (NodeNext resolution)', typed.code === 0 ? [] : [`tsc ${typed.timedOut ? 'timed out' : `exit ${typed.code}`}: ${typed.stdout}${typed.stderr}`.trim()]);

  // 7. The docs are the test: README and static-hosting snippets, verbatim.
  for (const { label, problems } of await runDocSnippets({ root, project, env, timeoutMs: STEP_TIMEOUT_MS, installedDir })) report(label, problems);
} catch (error) {
  if (!(error instanceof Fatal)) throw error;
  console.error(`pack-and-install test: ${error.message}`);
  process.exitCode = 1;
} finally {
  if (process.env.WEBPP_KEEP_PACK_TEST === '1') console.log(`  (kept ${temp})`);
  else rmSync(temp, { recursive: true, force: true });
}

const seconds = ((performance.now() - startedMs) / 1000).toFixed(1);
if (process.exitCode === 1) console.error(`pack-and-install test: stopped after ${seconds} s.`);
else if (failed > 0) {
  console.error(`pack-and-install test: ${failed} check(s) failed (${seconds} s).`);
  process.exitCode = 1;
} else console.log(`pack-and-install test: passed in ${seconds} s.`);
