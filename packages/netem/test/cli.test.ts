import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createRandom, loadScenario, planRequest } from '../src/index.js';
import { outcomeOf, startUpstream, timedGet, type Upstream } from './helpers.js';

const cli = join(import.meta.dirname, '../src/cli.ts');
let upstream: Upstream;

beforeEach(async () => {
  upstream = await startUpstream();
});

afterEach(async () => {
  await upstream.close();
});

describe('webpp-netem CLI', () => {
  it('validates scenario files, naming the bad field', () => {
    const ok = spawnSync(process.execPath, ['--import', 'tsx', cli, '--validate', 'degradation'], { encoding: 'utf8', timeout: 30_000 });
    expect(ok.status).toBe(0);
    expect(ok.stdout).toContain('ok: scenario "degradation" with servers A, B, C');
    const dir = mkdtempSync(join(tmpdir(), 'netem-'));
    try {
      const file = join(dir, 'bad.json');
      writeFileSync(file, JSON.stringify({ formatVersion: 1, name: 'bad', durationMs: 10, servers: { A: { link: { delayMs: 'slow' } } } }));
      const bad = spawnSync(process.execPath, ['--import', 'tsx', cli, '--validate', file], { encoding: 'utf8', timeout: 30_000 });
      expect(bad.status).toBe(1);
      expect(bad.stderr).toContain('WEBPP_ERR_NETEM_SCENARIO');
      expect(bad.stderr).toContain('$.servers.A.link.delayMs');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('puts every server of a scenario behind an emulator and prints where', async () => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', cli, '--scenario', 'outage', '--upstream', `A=${upstream.url}`, '--upstream', `B=${upstream.url}`, '--upstream', `C=${upstream.url}`],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    try {
      const lines: Array<{ server: string; url: string; upstream: string }> = [];
      for await (const line of createInterface({ input: child.stdout })) {
        lines.push(JSON.parse(line) as (typeof lines)[number]);
        if (lines.length === 3) break;
      }
      expect(lines.map((line) => line.server)).toEqual(['A', 'B', 'C']);
      const response = await timedGet(`${lines[1]!.url}/bytes/64`);
      expect(response.body.length).toBe(64);
      // B's first request draws its delay from B's seeded stream: the same draw, every run.
      const scenario = loadScenario('outage');
      const expected = planRequest(scenario.servers['B']!.link, createRandom(scenario.seed!, 'B')).delayMs;
      expect(expected).toBeGreaterThan(10);
      expect(response.firstByteMs).toBeGreaterThanOrEqual(expected);
      const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(await outcomeOf(timedGet(`${lines[0]!.url}/bytes/1`))).toBe('ECONNREFUSED');
    } finally {
      child.kill('SIGKILL');
    }
  });
});
