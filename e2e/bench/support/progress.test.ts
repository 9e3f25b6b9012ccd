import { describe, expect, it } from 'vitest';
import { formatDuration, isInteractive, Progress, remainingMs, statusLine, type ProgressOutput } from './progress.js';

/** A terminal (or a pipe) that keeps what was written. */
function recorder(isTTY: boolean, columns?: number): ProgressOutput & { text: string } {
  const output = { text: '', isTTY, columns, write: (chunk: string) => (output.text += chunk) };
  return output;
}

/** What a terminal shows: every `\r\x1b[2K` erases the current line. */
function screen(text: string): string[] {
  const lines: string[] = [];
  let line = '';
  // eslint-disable-next-line no-control-regex -- the terminal's erase-line sequence
  for (const piece of text.split(/(\r\x1b\[2K|\n)/)) {
    if (piece === '\r\x1b[2K') line = '';
    else if (piece === '\n') {
      lines.push(line);
      line = '';
    } else line += piece;
  }
  if (line !== '') lines.push(line);
  return lines;
}

describe('formatDuration', () => {
  it('says seconds, minutes and hours as a person would', () => {
    expect(formatDuration(0)).toBe('0 s');
    expect(formatDuration(-5)).toBe('0 s');
    expect(formatDuration(44_600)).toBe('45 s');
    expect(formatDuration(59_400)).toBe('59 s');
    expect(formatDuration(60_000)).toBe('1 min 00 s');
    expect(formatDuration(125_000)).toBe('2 min 05 s');
    expect(formatDuration(3_599_000)).toBe('59 min 59 s');
    expect(formatDuration(3_720_000)).toBe('1 h 02 min');
  });
});

describe('remainingMs', () => {
  it('extrapolates the pace so far: time spent × share left ÷ share done', () => {
    expect(remainingMs(60_000, 0.5)).toBe(60_000);
    expect(remainingMs(30_000, 0.25)).toBe(90_000);
    expect(remainingMs(600_000, 0.9)).toBeCloseTo(66_667, 0);
  });

  it('gives no estimate while too little is done, and 0 once all is', () => {
    expect(remainingMs(60_000, 0)).toBeUndefined();
    expect(remainingMs(60_000, 0.01)).toBeUndefined();
    expect(remainingMs(1_000, 0.5)).toBeUndefined();
    expect(remainingMs(Number.NaN, 0.5)).toBeUndefined();
    expect(remainingMs(5_000, 1)).toBe(0);
  });
});

describe('statusLine', () => {
  it('shows the bar, the share done, the time spent and left, and what runs', () => {
    const line = statusLine({ title: 'evaluation', fraction: 0.5, elapsedMs: 60_000, remainingMs: 60_000, label: 'peak (2/4): 10 policies running' });
    expect(line).toBe('evaluation [==========>         ]  50% 1 min 00 s, ~1 min 00 s left · peak (2/4): 10 policies running');
  });

  it('says it is estimating before it can, and fills the bar at the end', () => {
    expect(statusLine({ title: 't', fraction: 0, elapsedMs: 0, remainingMs: undefined, label: '' })).toBe('t [>                   ]   0% 0 s, estimating time left');
    expect(statusLine({ title: 't', fraction: 1.2, elapsedMs: 5_000, remainingMs: 0, label: 'x' })).toBe('t [====================] 100% 5 s, ~0 s left · x');
  });

  it('never wraps: cut to the terminal width with an ellipsis', () => {
    const line = statusLine({ title: 'evaluation', fraction: 0.3, elapsedMs: 1_000, remainingMs: undefined, label: 'x'.repeat(200), columns: 80 });
    expect(Array.from(line)).toHaveLength(79);
    expect(line.endsWith('…')).toBe(true);
  });
});

describe('isInteractive', () => {
  it('redraws only on a terminal, and not in CI or on a dumb terminal', () => {
    expect(isInteractive({ write: () => true, isTTY: true }, {})).toBe(true);
    expect(isInteractive({ write: () => true, isTTY: false }, {})).toBe(false);
    expect(isInteractive({ write: () => true }, {})).toBe(false);
    expect(isInteractive({ write: () => true, isTTY: true }, { CI: 'true' })).toBe(false);
    expect(isInteractive({ write: () => true, isTTY: true }, { TERM: 'dumb' })).toBe(false);
  });
});

describe('Progress', () => {
  it('when not on a terminal, prints only the one-line summaries and log lines', () => {
    const output = recorder(false);
    let nowMs = 0;
    const progress = new Progress({ title: 'bench', totalUnits: 4, output, now: () => nowMs });
    progress.step('part 1', 2);
    nowMs = 10_000;
    progress.label('part 1, phase 2');
    progress.complete('part 1 done');
    progress.log('a note');
    progress.step('part 2', 2, { expectedMs: 5_000 });
    nowMs = 20_000;
    progress.complete('part 2 done');
    progress.close();
    expect(output.text).toBe('part 1 done\na note\npart 2 done\n');
  });

  it('on a terminal, redraws one status line in place, under the lines that stay', () => {
    const output = recorder(true, 200);
    let nowMs = 0;
    const progress = new Progress({ title: 'bench', totalUnits: 100, output, now: () => nowMs, redrawIntervalMs: 0, interactive: true });
    progress.step('part 1', 50);
    nowMs = 30_000;
    progress.complete('part 1 done in 30 s');
    expect(screen(output.text)).toEqual(['part 1 done in 30 s', 'bench [==========>         ]  50% 30 s, ~30 s left']);
    progress.step('part 2', 50);
    expect(screen(output.text).at(-1)).toBe('bench [==========>         ]  50% 30 s, ~30 s left · part 2');
    progress.close();
    expect(screen(output.text)).toEqual(['part 1 done in 30 s']);
    progress.log('after the end');
    expect(screen(output.text)).toEqual(['part 1 done in 30 s', 'after the end']);
  });

  it('advances a timed part with the clock, and estimates the time left from it', () => {
    const output = recorder(true, 200);
    let nowMs = 0;
    const progress = new Progress({ title: 'evaluation', totalUnits: 200_000, output, now: () => nowMs, redrawIntervalMs: 0, interactive: true });
    progress.step('setup', 50_000);
    nowMs = 50_000;
    progress.step('peak: 10 policies running', 150_000, { expectedMs: 150_000 });
    nowMs = 125_000; // 75 s into the 150 s part: 50 + 75 of 200 units
    expect(progress.fraction()).toBeCloseTo(0.625, 6);
    expect(progress.status()).toBe('evaluation [============>       ]  62% 2 min 05 s, ~1 min 15 s left · peak: 10 policies running 1 min 15 s / 2 min 30 s');
    nowMs = 400_000; // overran: the part stays at its full share until it completes
    expect(progress.fraction()).toBe(1);
    expect(progress.status()).toContain('2 min 30 s / 2 min 30 s');
    progress.close();
  });

  it('counts a part started without completing the previous one, and follows a new total', () => {
    let nowMs = 0;
    const progress = new Progress({ title: 'b', totalUnits: 10, output: recorder(false), now: () => nowMs });
    progress.step('a', 4);
    progress.step('b', 4);
    expect(progress.fraction()).toBeCloseTo(0.4, 6);
    progress.setTotal(20);
    expect(progress.fraction()).toBeCloseTo(0.2, 6);
    progress.complete();
    expect(progress.fraction()).toBeCloseTo(0.4, 6);
    nowMs = 1;
    progress.close();
  });

  it('redraws by itself while time passes on a terminal', async () => {
    const output = recorder(true, 200);
    const progress = new Progress({ title: 'b', totalUnits: 10, output, redrawIntervalMs: 20, interactive: true });
    progress.step('waiting', 10, { expectedMs: 60_000 });
    const drawsBefore = output.text.split('\r').length;
    await new Promise((resolve) => setTimeout(resolve, 120));
    progress.close();
    expect(output.text.split('\r').length).toBeGreaterThan(drawsBefore + 2);
  });
});
