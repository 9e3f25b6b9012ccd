/**
 * The webpp-origin command: help, usage errors, serving a folder with a directory file,
 * secrets from the environment, Fastify's JSON logs, and a clean exit on SIGTERM / SIGINT.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseCli } from '../src/cli.js';
import { ADMIN_TOKEN, auth, bindingMap, removeTempDirs, tempDir, waitFor } from './helpers.js';

const CLI = fileURLToPath(new URL('../src/cli.ts', import.meta.url));
const children = new Set<ChildProcess>();
afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await removeTempDirs();
});

function runCli(args: string[], env: Record<string, string> = {}) {
  return spawnSync(process.execPath, ['--import', 'tsx', CLI, ...args], { encoding: 'utf8', env: { ...process.env, ...env }, timeout: 30_000 });
}

describe('webpp-origin --help and usage errors', () => {
  it('documents every option the issue asks for', () => {
    const result = runCli(['--help']);
    expect(result.status).toBe(0);
    for (const text of ['[root]', '--port', '--host', '--public-url', '--peer', '--directory', '--admin-token', '--cluster-secret', 'WEBPP_ADMIN_TOKEN', 'WEBPP_CLUSTER_SECRET', '--proxy-upstream', 'SIGTERM']) {
      expect(result.stdout).toContain(text);
    }
  });

  it.each([
    [[], /root folder/],
    [['--port', 'abc', '.'], /--port must be a non-negative integer/],
    [['--cors', 'some', '.'], /--cors must be/],
    [['.', '--proxy-upstream', 'http://127.0.0.1:1'], /exclusive/],
    [['--bogus', '.'], /bogus/],
  ])('rejects %j with exit code 2', (args, message) => {
    const result = runCli(args);
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(message);
  });

  it('reports invalid options from the plugin with their code and exit code 1', async () => {
    const result = runCli(['.', '--port', '0', '--admin-token', 'short', '--data-dir', await tempDir()]);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('WEBPP_ERR_BAD_OPTIONS');
  });

  it('turns batch transmission on only with --batch', () => {
    expect(parseCli(['site'])).toMatchObject({ options: { batch: false } });
    expect(parseCli(['site', '--batch'])).toMatchObject({ options: { batch: true } });
    expect(runCli(['--help']).stdout).toContain('--batch');
  });

  it('parses repeated and comma-separated peers and reads secrets from the environment', () => {
    process.env.WEBPP_CLUSTER_SECRET = 'from-the-environment-123';
    try {
      const parsed = parseCli(['site', '--peer', 'http://b.localhost:2,http://c.localhost:3', '--peer', 'http://d.localhost:4', '--alias-url', 'http://10.0.0.1:8080']);
      expect(parsed).toMatchObject({
        help: false,
        options: {
          root: 'site',
          peers: ['http://b.localhost:2', 'http://c.localhost:3', 'http://d.localhost:4'],
          aliasUrls: ['http://10.0.0.1:8080'],
          clusterSecret: 'from-the-environment-123',
        },
      });
    } finally {
      delete process.env.WEBPP_CLUSTER_SECRET;
    }
  });
});

describe('webpp-origin serving a folder', () => {
  it.each(['SIGTERM', 'SIGINT'] as const)('serves, accepts management, logs as JSON and exits cleanly on %s', async (signal) => {
    const root = await tempDir();
    await mkdir(join(root, 'images'));
    await writeFile(join(root, 'index.html'), '<html><head></head><body><img src="/images/a.png"></body></html>');
    await writeFile(join(root, 'images', 'a.png'), 'png');
    const directoryFile = join(await tempDir(), 'directory.json');
    await writeFile(directoryFile, JSON.stringify({ formatVersion: 1, entries: [{ logical: '/images/*', servers: ['http://b.localhost:8082'] }] }));
    const dataDir = await tempDir();
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', CLI, root, '--port', '0', '--public-host', 'a.localhost', '--directory', directoryFile, '--data-dir', dataDir],
      { env: { ...process.env, WEBPP_ADMIN_TOKEN: ADMIN_TOKEN }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    children.add(child);
    let stdout = '';
    child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const listening = await new Promise<{ url: string; listen: string }>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no listening log line: ${stdout}`)), 20_000);
      child.stdout?.on('data', () => {
        const line = stdout.split('\n').find((candidate) => candidate.includes('webpp-origin listening'));
        if (line !== undefined) {
          clearTimeout(timer);
          resolve(JSON.parse(line) as { url: string; listen: string });
        }
      });
    });
    expect(listening.url).toMatch(/^http:\/\/a\.localhost:\d+$/);
    const base = `http://${listening.listen}`;
    const page = await fetch(`${base}/`);
    expect(await page.text()).toContain('<script src="/webpp.js" async></script>');
    expect(Object.keys(bindingMap(page.headers.get('webpp-bindings') ?? undefined))).toEqual([`${listening.url}/images/*`]);
    const created = await fetch(`${base}/.well-known/webpp/replicas/new.txt`, { method: 'POST', headers: auth, body: 'new' });
    expect(created.status).toBe(201);
    // A HUP (logrotate) without TLS is logged and ignored: the server keeps serving.
    child.kill('SIGHUP');
    await waitFor('the HUP to be logged', () => stdout.includes('no TLS certificate to reload'));
    expect((await fetch(`${base}/.well-known/webpp/health`)).status).toBe(200);

    child.kill(signal);
    expect(await exited).toBe(0);
    children.delete(child);
    expect(stdout).toContain('webpp-origin stopped');
  }, 60_000);
});
