/**
 * The webpp-origin command: help, usage errors, serving a folder with a directory file,
 * secrets from the environment, Fastify's JSON logs, and a clean exit on SIGTERM / SIGINT.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { HELP, parseCli } from '../src/cli.js';
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

  it('refuses a root folder that does not exist with exit code 2, before it listens', async () => {
    const missing = join(await tempDir(), 'no-such-site');
    const result = runCli([missing, '--port', '0', '--data-dir', await tempDir()]);
    expect(result.status).toBe(2);
    expect(result.stderr).toContain(`the root folder ${missing} does not exist`);
    expect(result.stdout).not.toContain('webpp-origin listening');
  });

  it.each([
    [['--max-replica-bytes', '0'], /--max-replica-bytes must be >= 1/],
    [['--max-replica-bytes', '1e6'], /--max-replica-bytes must be a non-negative integer/],
    [['--replication-overload-ratio', '200'], /--replication-overload-ratio must be <= 100/],
    [['--replication-overload-ratio', 'high'], /--replication-overload-ratio must be a number/],
    // A flag of an option that became a constant (issue 24) is named, with what to do.
    [['--stats-ewma-weight', '0.5'], /--stats-ewma-weight: removed \(issue 24\), now a constant; delete it/],
    [['--port', '70000'], /--port must be <= 65535/],
    [['--admin-token', 'short'], /--admin-token must NOT have fewer than 16 characters/],
    [['--admin-token', 'sixteen chars with spaces'], /--admin-token must be made of visible ASCII characters/],
    [['--script-path', 'webpp.js'], /--script-path must be a path starting with \//],
    [['--script-path', '/same.js', '--worker-path', '/same.js'], /--script-path and --worker-path must differ/],
    [['--peer', 'http://b.localhost:2'], /--cluster-secret is required/],
    [['--peer', 'ftp://b.localhost:2', '--cluster-secret', 'x'.repeat(16)], /--peer\[0\] must be an http\(s\) URL/],
    [['--public-url', 'http://a.localhost:1/path'], /--public-url must be an origin without path/],
    [['--batch-max-parts=-1'], /--batch-max-parts must be >= 0/],
    [['--batch-compression', 'sometimes'], /--batch-compression must be one of "auto", "never", "always"/],
    [['--log-level', 'loud'], /--log-level must be one of/],
  ])('names the flag of a bad value %j', (args, message) => {
    expect(() => parseCli(['.', ...args], {})).toThrow(message);
  });

  it('answers bad values with exit code 2, every bad flag named at once', () => {
    const result = runCli(['.', '--max-replica-bytes', '0', '--sync-interval-ms', '1', '--cors', 'some', '--replication-overload-ratio', '200']);
    expect(result.status).toBe(2);
    for (const message of ['--max-replica-bytes must be >= 1', '--sync-interval-ms must be >= 10', '--cors must be one of', '--replication-overload-ratio must be <= 100']) {
      expect(result.stderr).toContain(message);
    }
  });

  it('reports a start-up failure with its code and exit code 1', async () => {
    const result = runCli(['.', '--port', '0', '--directory', join(await tempDir(), 'missing.json'), '--data-dir', await tempDir()]);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('WEBPP_ERR_DIRECTORY_FILE');
  });

  it('has a flag for every plugin option that is not code, with the schema\'s types and defaults', () => {
    const parsed = parseCli(
      ['site', '--no-serve-client-scripts', '--script-path', '/c.js', '--peer-timeout-ms', '250', '--preprocess-cache-bytes', '0', '--batch-max-parts', '3'],
      {},
    );
    expect(parsed).toMatchObject({
      options: { serveClientScripts: false, scriptPath: '/c.js', peerTimeoutMs: 250, preprocessCacheBytes: 0, batch: { maxParts: 3 }, injectScript: true },
    });
    for (const flag of ['--max-clock-skew-ms', '--max-bindings-header-bytes', '--max-preprocess-bytes', '--stats-rate-half-life-ms', '--stats-max-resources', '--worker-path', '--batch-concurrency']) {
      expect(HELP).toContain(flag);
    }
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

  it('names the variable or the file a bad value came from, not a flag the user never typed', async () => {
    expect(() => parseCli(['site'], { PORT: 'abc' })).toThrow(/^\$PORT must be a non-negative integer/);
    expect(() => parseCli(['site'], { WEBPP_ADMIN_TOKEN: 'short' })).toThrow(/^\$WEBPP_ADMIN_TOKEN must NOT have fewer than 16 characters/);
    const file = join(await tempDir(), 'admin-token');
    await writeFile(file, 'short\n');
    expect(() => parseCli(['site', '--admin-token-file', file], {})).toThrow(/^--admin-token-file must NOT have fewer than 16 characters/);
    await writeFile(file, 'a-long-enough-admin-token\n');
    expect(parseCli(['site', '--admin-token-file', file], { WEBPP_ADMIN_TOKEN: 'short' })).toMatchObject({ options: { adminToken: 'a-long-enough-admin-token' } });
    expect(() => parseCli(['site', '--admin-token-file', file, '--admin-token', 'a-long-enough-admin-token'], {})).toThrow(/not both/);
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
