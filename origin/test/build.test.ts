/**
 * `webpp-origin build` (static hosting mode): a folder pre-processed offline carries the
 * bindings the origin would send, in `_headers` and in the static bindings file.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { decodeBindings, type Binding } from '@webpp/core';
import { buildStaticSite } from '../src/build/static-build.js';
import { parseHeadersFile } from '../src/build/headers-file.js';
import { removeTempDirs, tempDir } from './helpers.js';

const run = promisify(execFile);
const A = 'http://a.localhost:8081';
const B = 'http://b.localhost:8082';
const C = 'http://c.localhost:8083';
const CLI = join(import.meta.dirname, '..', 'dist', 'cli.js');

async function site(pages: Record<string, string>, entries: unknown[]): Promise<{ inDir: string; outDir: string; directoryFile: string }> {
  const root = await tempDir('webpp-build-test-');
  const inDir = join(root, 'site');
  for (const [path, text] of Object.entries(pages)) {
    await mkdir(join(inDir, path, '..'), { recursive: true });
    await writeFile(join(inDir, path), text);
  }
  const directoryFile = join(root, 'directory.json');
  await writeFile(directoryFile, JSON.stringify({ formatVersion: 1, logicalOrigin: A, entries }));
  return { inDir, outDir: join(root, 'out'), directoryFile };
}

function bindingsOf(value: string | undefined): Binding[] {
  const decoded = decodeBindings(value);
  if (!decoded.ok) throw new Error(`undecodable: ${decoded.error.message}`);
  return decoded.document.bindings;
}

function headerOf(headersText: string, path: string, name: string): string | undefined {
  return parseHeadersFile(headersText).get(path)?.find(([key]) => key.toLowerCase() === name)?.[1];
}

afterEach(removeTempDirs);

describe('webpp-origin build', () => {
  const pages = {
    'index.html': '<!doctype html><html><head><link rel="stylesheet" href="/css/site.css"></head><body><img src="/img/a.png"><img src="plain.png"></body></html>',
    'css/site.css': 'body { background: url(/img/bg.png) }',
    'img/a.png': 'PNG-A',
    'img/bg.png': 'PNG-BG',
    'plain.png': 'PLAIN',
    'docs/page.html': '<html><body><img src="../img/a.png"></body></html>',
  };
  const entries = [
    { logical: '/img/*', servers: [B, C] },
    { logical: '/css/site.css', servers: [A, B] },
  ];

  it('writes each page and stylesheet bindings into _headers, decoding to the replicas of what it references', async () => {
    const { inDir, outDir, directoryFile } = await site(pages, entries);
    const report = await buildStaticSite({ inDir, outDir, directoryFile, clientBundleDir: join(import.meta.dirname, '..', '..', 'sw', 'bundle') });
    expect(report).toMatchObject({ pages: 2, stylesheets: 1 });
    const headers = await readFile(join(outDir, '_headers'), 'utf8');

    const index = bindingsOf(headerOf(headers, '/index.html', 'webpp-bindings'));
    expect(index.map((binding) => [binding.logical, binding.prefix, binding.replicas])).toEqual([
      [`${A}/img/`, true, [`${B}/img/`, `${C}/img/`]],
      [`${A}/css/site.css`, false, [`${A}/css/site.css`, `${B}/css/site.css`]],
    ]);
    // The folder URL "/" is the same page.
    expect(headerOf(headers, '/', 'webpp-bindings')).toBe(headerOf(headers, '/index.html', 'webpp-bindings'));
    expect(bindingsOf(headerOf(headers, '/css/site.css', 'webpp-bindings')).map((binding) => binding.logical)).toEqual([`${A}/css/site.css`, `${A}/img/`]);
    expect(bindingsOf(headerOf(headers, '/docs/page.html', 'webpp-bindings')).map((binding) => binding.logical)).toEqual([`${A}/img/`]);
    // Images are not pre-processed and get no rule of their own.
    expect(parseHeadersFile(headers).has('/img/a.png')).toBe(false);
  });

  it('gives every file the CORS and Timing-Allow-Origin headers a mirror needs', async () => {
    const { inDir, outDir, directoryFile } = await site(pages, entries);
    await buildStaticSite({ inDir, outDir, directoryFile });
    const headers = await readFile(join(outDir, '_headers'), 'utf8');
    expect(headerOf(headers, '/*', 'access-control-allow-origin')).toBe('*');
    expect(headerOf(headers, '/*', 'timing-allow-origin')).toBe('*');
    expect(headerOf(headers, '/*', 'access-control-expose-headers')).toContain('webpp-bindings');
    expect(headerOf(headers, '/webpp-sw.js', 'service-worker-allowed')).toBe('/');
  });

  it('writes the static bindings file: lines that decode to every binding of the site once', async () => {
    const { inDir, outDir, directoryFile } = await site(pages, entries);
    await buildStaticSite({ inDir, outDir, directoryFile });
    const text = await readFile(join(outDir, '.well-known', 'webpp', 'bindings'), 'utf8');
    const lines = text.split('\n').filter((line) => line !== '' && !line.startsWith('#'));
    const all = lines.flatMap((line) => bindingsOf(line));
    expect(all.map((binding) => binding.logical).sort()).toEqual([`${A}/css/site.css`, `${A}/img/`]);
    await expect(readFile(join(outDir, '.nojekyll'), 'utf8')).resolves.toBe('');
  });

  it('splits a large site into lines within the header budget, none lost', async () => {
    const many: Record<string, string> = {};
    const manyEntries: unknown[] = [];
    // Names that do not compress away, as on a real site.
    const names = Array.from({ length: 400 }, (_, index) => createHash('sha256').update(String(index)).digest('hex').slice(0, 24));
    for (const name of names) manyEntries.push({ logical: `/files/${name}.bin`, servers: [B, C] });
    many['index.html'] = `<html><body>${names.map((name) => `<a href="/files/${name}.bin">x</a>`).join('')}</body></html>`;
    const { inDir, outDir, directoryFile } = await site(many, manyEntries);
    const report = await buildStaticSite({ inDir, outDir, directoryFile, maxBindingsHeaderBytes: 2_048 });
    const text = await readFile(join(outDir, '.well-known', 'webpp', 'bindings'), 'utf8');
    const lines = text.split('\n').filter((line) => line !== '' && !line.startsWith('#'));
    expect(lines.length).toBeGreaterThan(1);
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(2_048);
    expect(new Set(lines.flatMap((line) => bindingsOf(line)).map((binding) => binding.logical)).size).toBe(400);
    expect(report.bindings).toBe(400);
  });

  it('stamps the bindings with the build time as directory version, so that a later build replaces what browsers kept', async () => {
    const { inDir, outDir, directoryFile } = await site(pages, entries);
    const beforeS = Math.floor(Date.now() / 1000);
    await buildStaticSite({ inDir, outDir, directoryFile });
    const version = (value: string | undefined): number => {
      const decoded = decodeBindings(value);
      if (!decoded.ok) throw new Error(decoded.error.message);
      return decoded.document.directoryVersion;
    };
    const headers = await readFile(join(outDir, '_headers'), 'utf8');
    const first = version(headerOf(headers, '/index.html', 'webpp-bindings'));
    expect(first).toBeGreaterThanOrEqual(beforeS);
    expect(first).toBeLessThanOrEqual(Math.floor(Date.now() / 1000));
    await run(process.execPath, [CLI, 'build', inDir, '--out', outDir, '--directory', directoryFile, '--directory-version', String(first + 100)]);
    const line = (await readFile(join(outDir, '.well-known', 'webpp', 'bindings'), 'utf8')).split('\n')[1];
    expect(version(line)).toBe(first + 100);
    expect(version(headerOf(await readFile(join(outDir, '_headers'), 'utf8'), '/index.html', 'webpp-bindings'))).toBe(first + 100);
  });

  it('injects the page-script tag only with --inject, and copies the page script and the worker', async () => {
    const { inDir, outDir, directoryFile } = await site(pages, entries);
    await run(process.execPath, [CLI, 'build', inDir, '--out', outDir, '--directory', directoryFile]);
    expect(await readFile(join(outDir, 'index.html'), 'utf8')).toBe(pages['index.html']);
    const bundle = join(import.meta.dirname, '..', '..', 'sw', 'bundle');
    expect(await readFile(join(outDir, 'webpp-sw.js'))).toEqual(await readFile(join(bundle, 'webpp-sw.js')));
    expect(await readFile(join(outDir, 'webpp.js'))).toEqual(await readFile(join(bundle, 'webpp.js')));
    expect(await readFile(join(outDir, 'img', 'a.png'), 'utf8')).toBe('PNG-A');

    const injected = join(outDir, '..', 'out-injected');
    const { stdout } = await run(process.execPath, [CLI, 'build', inDir, '--out', injected, '--directory', directoryFile, '--inject']);
    expect(stdout).toContain('2 pages');
    const html = await readFile(join(injected, 'index.html'), 'utf8');
    expect(html).toBe(pages['index.html'].replace('<head>', '<head><script src="/webpp.js" async></script>'));
    expect(await readFile(join(injected, 'docs', 'page.html'), 'utf8')).toContain('<script src="/webpp.js" async></script>');
  });

  it('refuses bad input with a usage error or a named directory-file error', async () => {
    const { inDir, outDir, directoryFile } = await site(pages, entries);
    await expect(run(process.execPath, [CLI, 'build', inDir, '--directory', directoryFile])).rejects.toMatchObject({ code: 2 });
    // --out inside the input folder is a usage error too (docs/static-hosting.md: 2), not a failed build.
    await expect(run(process.execPath, [CLI, 'build', inDir, '--out', join(inDir, 'out'), '--directory', directoryFile])).rejects.toMatchObject({ code: 2 });
    await writeFile(directoryFile, JSON.stringify({ formatVersion: 1, entries: [{ logical: '/x', servers: [B] }] }));
    const failed = await run(process.execPath, [CLI, 'build', inDir, '--out', outDir, '--directory', directoryFile]).catch((error: { stderr: string; code: number }) => error);
    expect(failed).toMatchObject({ code: 1 });
    expect((failed as { stderr: string }).stderr).toContain('WEBPP_ERR_DIRECTORY_FILE');
    const { stdout } = await run(process.execPath, [CLI, '--help']);
    expect(stdout).toContain('webpp-origin build');
  });

  it('leaves dotfiles and links out of the folder out of what it deploys, and keeps .well-known', async () => {
    const { inDir, outDir, directoryFile } = await site({ ...pages, '.env': 'DB_PASSWORD=x', '.git/config': '[core]', '.well-known/security.txt': 'Contact: x' }, entries);
    const secret = join(await tempDir(), 'secret.txt');
    await writeFile(secret, 'outside the site');
    await symlink(secret, join(inDir, 'linked.txt'));
    await symlink(join(inDir, 'plain.png'), join(inDir, 'alias.png'));
    await run(process.execPath, [CLI, 'build', inDir, '--out', outDir, '--directory', directoryFile]);
    expect(existsSync(join(outDir, '.env'))).toBe(false);
    expect(existsSync(join(outDir, '.git'))).toBe(false);
    expect(existsSync(join(outDir, 'linked.txt'))).toBe(false);
    expect(await readFile(join(outDir, 'alias.png'), 'utf8')).toBe('PLAIN');
    expect(await readFile(join(outDir, '.well-known', 'security.txt'), 'utf8')).toBe('Contact: x');
  });

  it.each([
    [['--logical-origin', 'example.org'], /--logical-origin must be an http\(s\) origin/],
    [['--logical-origin', 'https://example.org/docs/'], /--logical-origin must be an http\(s\) origin/],
    [['--max-header-bytes', '10'], /--max-header-bytes must be an integer >= 64/],
  ])('refuses %j as a usage error naming the flag, before it writes anything', async (args, message) => {
    const { inDir, outDir, directoryFile } = await site(pages, entries);
    const failed = await run(process.execPath, [CLI, 'build', inDir, '--out', outDir, '--directory', directoryFile, ...args]).catch((error: { stderr: string; code: number }) => error);
    expect(failed).toMatchObject({ code: 2 });
    expect((failed as { stderr: string }).stderr).toMatch(message);
    expect(existsSync(outDir)).toBe(false);
  });
});
