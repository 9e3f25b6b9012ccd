/**
 * `npx webpp-origin` in the repository after `npm ci && npm run build`, as the examples'
 * READMEs say. Found by following them on a fresh worktree: npm links a package's bin only
 * when its file exists at install time, and the bin was dist/cli.js, which only the build
 * makes; `npx webpp-origin` then asked the npm registry for a package named webpp-origin
 * (E404, or whatever someone published under that name). This installs a workspace holding
 * @webpp/origin's package.json and bin/ without dist/ (a fresh clone), offline, and runs
 * the command npm linked.
 */
import { execFile } from 'node:child_process';
import { cp, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { removeTempDirs, tempDir } from './helpers.js';

const run = promisify(execFile);
const ORIGIN_DIR = new URL('..', import.meta.url).pathname;

afterAll(removeTempDirs);

describe('the webpp-origin command in a fresh clone', () => {
  it('is linked by npm install before anything is built', async () => {
    const root = await tempDir('webpp-bin-link-');
    const manifest = JSON.parse(await readFile(join(ORIGIN_DIR, 'package.json'), 'utf8')) as { name: string; version: string; bin: Record<string, string>; files: string[] };
    // Only what decides the linking: name, bin and files (no dependencies to fetch).
    await mkdir(join(root, 'origin'));
    await writeFile(join(root, 'origin', 'package.json'), JSON.stringify({ name: manifest.name, version: manifest.version, type: 'module', bin: manifest.bin, files: manifest.files }));
    await cp(join(ORIGIN_DIR, 'bin'), join(root, 'origin', 'bin'), { recursive: true }).catch(() => undefined);
    await writeFile(join(root, 'package.json'), JSON.stringify({ name: 'fresh-clone', private: true, workspaces: ['origin'] }));
    await run('npm', ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts'], { cwd: root, timeout: 60_000 });

    // Not built yet: the linked command runs ours and says what to do.
    const linked = join(root, 'node_modules', '.bin', 'webpp-origin');
    const outcome = await run(linked, ['--help'], { cwd: root, timeout: 30_000 }).then(
      () => ({ code: 0, stderr: '' }),
      (error: { code?: number | string; stderr?: string }) => ({ code: error.code, stderr: error.stderr ?? '' }),
    );
    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toContain('npm run build');
  }, 90_000);
});
