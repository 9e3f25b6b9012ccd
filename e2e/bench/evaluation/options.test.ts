import { describe, expect, it } from 'vitest';
import { evaluationOptions, timeScaleFor } from './options.js';

const resolveOut = (path: string): string => `/repo/${path}`;

describe('evaluation options', () => {
  it('runs every shipped scenario once, each fitted to 60 s, by default', () => {
    const options = evaluationOptions([], {}, resolveOut);
    expect(options).toMatchObject({ runs: 1, scenarioSeconds: 60, timeScale: undefined, clients: 1, policies: undefined, outDir: '/repo/docs/benchmarks', rawDir: undefined });
    expect(options.scenarios).toEqual(['peak', 'evening', 'outage', 'degradation', 'tail-stalls', 'slow-body', 'flapping', 'rotating', 'recovery']);
    expect(options.command).toBe('npm run bench evaluation');
    // A 300 s scenario runs at 0.2, a 60 s one uncompressed.
    expect(timeScaleFor(options, 300_000)).toBeCloseTo(0.2, 9);
    expect(timeScaleFor(options, 60_000)).toBe(1);
  });

  it('takes --runs from the command line (npm run bench evaluation -- --runs 3) or WEBPP_EVAL_RUNS, and says so in the command', () => {
    expect(evaluationOptions(['--runs', '3'], {}, resolveOut)).toMatchObject({ runs: 3, command: 'npm run bench evaluation -- --runs 3' });
    expect(evaluationOptions([], { WEBPP_EVAL_RUNS: '2', WEBPP_EVAL_SCENARIOS: 'peak, outage' }, resolveOut)).toMatchObject({
      runs: 2,
      scenarios: ['peak', 'outage'],
      command: 'WEBPP_EVAL_SCENARIOS=peak, outage npm run bench evaluation -- --runs 2',
    });
  });

  it('--quick is one run of 15 s scenarios, and says so in the command', () => {
    expect(evaluationOptions(['--quick'], {}, resolveOut)).toMatchObject({ runs: 1, scenarioSeconds: 15, command: 'npm run bench evaluation -- --quick' });
  });

  it('a fixed WEBPP_EVAL_TIME_SCALE wins over the fitting', () => {
    const options = evaluationOptions([], { WEBPP_EVAL_TIME_SCALE: '0.5' }, resolveOut);
    expect(timeScaleFor(options, 60_000)).toBe(0.5);
  });

  it('refuses values it cannot honour', () => {
    expect(() => evaluationOptions(['--runs', '0'], {}, resolveOut)).toThrow(RangeError);
    expect(() => evaluationOptions(['--runs', 'three'], {}, resolveOut)).toThrow(RangeError);
    expect(() => evaluationOptions(['--rnus', '3'], {}, resolveOut)).toThrow();
    expect(() => evaluationOptions([], { WEBPP_EVAL_TIME_SCALE: '2' }, resolveOut)).toThrow(RangeError);
    expect(() => evaluationOptions([], { WEBPP_EVAL_SCENARIO_SECONDS: '1' }, resolveOut)).toThrow(RangeError);
  });
});
