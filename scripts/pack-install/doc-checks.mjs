// What the pack-and-install test checks while the README's and docs/static-hosting.md's
// snippets run (doc-snippets.mjs runs them): the servers they start answer as the docs say.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { createServer as createNetServer } from 'node:net';
import { createServer } from 'node:http';
import { delimiter, join } from 'node:path';
import { DOC_PORTS, extractBlocks, runDocument } from './doc-snippets.mjs';
import { buildSource } from './fixtures.mjs';
import { run } from './run.mjs';

function freePort() {
  return new Promise((resolve, reject) => {
    const probe = createNetServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

function writeFiles(dir, files) {
  for (const [path, body] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), body);
  }
}

const PAGE = '<!doctype html><html><head><title>site</title></head><body><img src="/img/a.png" alt=""></body></html>';

async function get(url, init = {}) {
  const response = await fetch(url, { ...init, signal: AbortSignal.timeout(10_000) });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

/** Problems with a page that should carry bindings for /img/* and the page-script tag. */
async function pageProblems(url, served, what) {
  const page = await get(url);
  const problems = [];
  if (page.status !== 200) problems.push(`${what}: GET ${url} answered ${page.status}`);
  if (!page.headers.get('webpp-bindings')) problems.push(`${what}: the page has no webpp-bindings header`);
  for (const snippet of served) if (!page.text.includes(snippet)) problems.push(`${what}: the page does not contain ${snippet}`);
  return problems;
}

/**
 * Runs both documents in folders of the fresh project; returns one labelled list of problems
 * per document.
 */
export async function runDocSnippets({ root, project, env, timeoutMs, installedDir }) {
  const ports = new Map();
  for (const port of DOC_PORTS) ports.set(port, await freePort());
  const local = (port) => `http://127.0.0.1:${ports.get(port)}`;
  // As with npx: the project's bins first. serve would ask the registry for a newer version.
  const docEnv = { ...env, PATH: `${join(project, 'node_modules', '.bin')}${delimiter}${env.PATH ?? ''}`, NO_UPDATE_CHECK: '1' };
  const installed = (name) => existsSync(join(installedDir(name), 'package.json'));
  const bundle = async (cwd, file) => {
    writeFileSync(join(cwd, 'build-sw.mjs'), buildSource.replace('"sw.js"', JSON.stringify(file)));
    const built = await run(process.execPath, ['build-sw.mjs'], { cwd, timeoutMs, env });
    return built.code === 0 ? [] : [`esbuild could not bundle ${file}: ${built.stderr.slice(-800)}`];
  };
  const results = [];
  const startedMs = performance.now();
  const seconds = () => `${Math.round((performance.now() - startedMs) / 1000)} s`;

  // The README: a Fastify app, a three-server cluster, proxy mode, check, static build.
  const readme = join(project, 'readme');
  writeFiles(readme, { 'site/index.html': PAGE, 'site/img/a.png': 'png', 'public/index.html': PAGE });
  const upstream = createServer((request, response) => response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE));
  await new Promise((resolve) => upstream.listen(ports.get(3000), '127.0.0.1', resolve));
  try {
    const afterServe = async (index, { env: shellEnv, served }) => {
      if (index === 0) return pageProblems(`${local(8081)}/`, served, 'the Fastify app');
      if (index === 1) {
        const problems = await pageProblems(`${local(8081)}/`, served, 'server a');
        // Trap 1 of issue 23: a replica POSTed to b is registered under a's logical URL.
        const auth = { authorization: `Bearer ${shellEnv.WEBPP_ADMIN_TOKEN}` };
        const created = await get(`${local(8082)}/.well-known/webpp/replicas/guide.html`, { method: 'POST', headers: { ...auth, 'content-type': 'text/html' }, body: PAGE });
        if (created.status !== 201) problems.push(`POST of a replica to b answered ${created.status}: ${created.text.slice(0, 300)}`);
        const logical = `http://a.localhost:${ports.get(8081)}/guide.html`;
        let replicated = false;
        for (let attempt = 0; attempt < 50 && !replicated; attempt++) {
          const answer = JSON.parse((await get(`${local(8081)}/.well-known/webpp/resolve?url=${encodeURIComponent(logical)}`)).text);
          replicated = answer.replicated === true && answer.physicalUrls.includes(`http://b.localhost:${ports.get(8082)}/guide.html`);
          if (!replicated) await new Promise((resolve) => setTimeout(resolve, 200));
        }
        if (!replicated) problems.push(`a does not resolve ${logical} to b's replica within 10 s`);
        return problems;
      }
      return pageProblems(`${local(8081)}/`, served, 'proxy mode');
    };
    const blocks = extractBlocks(join(root, 'README.md'), '## Add it to your site');
    const outcome = await runDocument({ blocks, cwd: readme, env: docEnv, ports, installed, timeoutMs, hooks: { afterServe, bundle: (file) => bundle(readme, file) } });
    results.push({ label: `README "Add it to your site": ${blocks.length} blocks run verbatim in ${seconds()}${outcome.skipped.length > 0 ? ` (skipped: ${outcome.skipped.join(', ')})` : ''}`, problems: outcome.problems });
  } finally {
    await new Promise((resolve) => upstream.close(resolve));
  }

  // docs/static-hosting.md: build, then a mirror served by `serve` with the guide's headers.
  const staticStartedMs = performance.now();
  const staticDir = join(project, 'static-hosting');
  writeFiles(staticDir, { 'site/index.html': PAGE, 'site/about.html': PAGE, 'site/img/a.png': 'png' });
  const staticBlocks = extractBlocks(join(root, 'docs', 'static-hosting.md'));
  const staticOutcome = await runDocument({
    blocks: staticBlocks,
    cwd: staticDir,
    env: docEnv,
    ports,
    installed,
    timeoutMs,
    hooks: {
      bundle: (file) => bundle(staticDir, file),
      afterServe: async () => {
        const file = await get(`${local(8082)}/img/a.png`, { headers: { origin: 'https://example.github.io' } });
        const problems = [];
        if (file.status !== 200) problems.push(`the mirror answered ${file.status} for /img/a.png`);
        for (const header of ['access-control-allow-origin', 'timing-allow-origin']) if (file.headers.get(header) !== '*') problems.push(`the mirror sends no "${header}: *"`);
        if (!existsSync(join(staticDir, 'dist', '.well-known', 'webpp', 'bindings'))) problems.push('the build wrote no static bindings file');
        return problems;
      },
    },
  });
  results.push({ label: `docs/static-hosting.md: ${staticBlocks.length} blocks run verbatim in ${Math.round((performance.now() - staticStartedMs) / 1000)} s${staticOutcome.skipped.length > 0 ? ` (skipped: ${staticOutcome.skipped.join(', ')})` : ''}`, problems: staticOutcome.problems });
  return results;
}
