import { FAST_PRESET, PAPER_DEFAULTS, WEBPP_DEFAULTS } from '@webpp/core';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DEFAULT_WORKER_OPTIONS, parseWorkerOptions, resolveWorkerOptions } from '../src/config.js';
import { WORKER_INTERNALS, WORKER_OPTION_SCHEMA, removedOptionNames } from '../src/options-schema.js';

/** The query the page script builds from a tag's data-* attributes (sw/src/webpp.ts). */
function fromTag(tag: string): URLSearchParams {
  const params = new URLSearchParams();
  for (const [, attribute, value] of tag.matchAll(/data-([a-z_-]+)="([^"]*)"/g)) {
    params.set(attribute!.replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase()), value!);
  }
  return params;
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('worker options', () => {
  it('has at most 15 public options, the rest are internal', () => {
    expect(Object.keys(WORKER_OPTION_SCHEMA).length).toBeLessThanOrEqual(15);
    for (const name of removedOptionNames()) expect(Object.hasOwn(WORKER_OPTION_SCHEMA, name)).toBe(false);
    expect(removedOptionNames()).toEqual(expect.arrayContaining(['preset', 'ttlMs', 'minSamplesForQuantile', 'changeStreakSamples', 'bucketCapacityTokens', 'pushPairSlackMs', 'flushDelayMs']));
  });

  it('defaults to the webpp policy, and to the paper parameters for the extended Refresh family', () => {
    const { options, errors } = parseWorkerOptions(new URLSearchParams(''));
    expect(errors).toEqual([]);
    expect(options.policy).toBe('webpp');
    expect(options.preset).toBe('paper');
    expect(options.selection).toEqual(PAPER_DEFAULTS);
    expect(options.webpp).toEqual({});
    expect(options.flushDelayMs).toBe(WORKER_INTERNALS.flushDelayMs);
    expect(options.controlCheckMs).toBe(WORKER_OPTION_SCHEMA.controlCheckMs.default);
    expect(options).toMatchObject(DEFAULT_WORKER_OPTIONS);
  });

  it('takes the tag\'s data-* attributes, by the schema\'s kinds', () => {
    const { options, errors } = parseWorkerOptions(fromTag('<script src="/webpp.js" data-timeout-ceiling-ms="8000" data-eject-after-failures="2" data-features="offline" data-control-check-ms="0" async>'));
    expect(errors).toEqual([]);
    expect(options.webpp).toEqual({ timeoutCeilingMs: 8_000, ejectAfterFailures: 2 });
    // The timeouts apply to the paper's policies too.
    expect(options.selection).toEqual({ ...PAPER_DEFAULTS, timeoutCeilingMs: 8_000 });
    expect(options.features).toEqual(['offline']);
    expect(options.controlCheckMs).toBe(0);
  });

  it('policy=paper and policy=fast run the extended Refresh with that policy\'s values: one way to say it', () => {
    const paper = parseWorkerOptions(new URLSearchParams('policy=paper'));
    expect(paper.errors).toEqual([]);
    expect(paper.options.selection).toEqual(PAPER_DEFAULTS);
    const fast = parseWorkerOptions(new URLSearchParams('policy=fast&timeoutCeilingMs=8000'));
    expect(fast.errors).toEqual([]);
    expect(fast.options.preset).toBe('fast');
    expect(fast.options.selection).toEqual({ ...FAST_PRESET, timeoutCeilingMs: 8_000 });
  });

  it('ignores a removed option with one console warning naming it, and lists it in the errors', () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    const { options, errors } = parseWorkerOptions(new URLSearchParams('preset=fast&hedgeQuantile=0.5&historySize=7'));
    expect(options.selection).toEqual(PAPER_DEFAULTS);
    expect(options.webpp).toEqual({});
    expect(options.historySize).toBe(WORKER_INTERNALS.historySize);
    expect(errors).toEqual(['option "preset" was removed and is ignored', 'option "hedgeQuantile" was removed and is ignored', 'option "historySize" was removed and is ignored']);
    const warnings = warn.mock.calls.map((call) => String(call[0]));
    for (const name of ['preset', 'hedgeQuantile', 'historySize']) expect(warnings.filter((text) => text.includes(`"${name}"`))).toHaveLength(1);
    // One warning per worker: the same option again does not warn again.
    parseWorkerOptions(new URLSearchParams('preset=fast'));
    expect(warn.mock.calls.filter((call) => String(call[0]).includes('"preset"'))).toHaveLength(1);
  });

  it('reports bad settings and keeps going with the defaults', () => {
    const { options, errors } = parseWorkerOptions(new URLSearchParams('timeoutCeilingMs=soon&extraBudgetShare=2&offRetryMs=1.5&color=blue&policy=Bad Name!'));
    expect(options.webpp).toEqual({});
    expect(options.offRetryMs).toBe(WORKER_OPTION_SCHEMA.offRetryMs.default);
    expect(options.policy).toBe('webpp');
    expect(errors).toEqual([
      'timeoutCeilingMs must be in [1, 600000] (got "soon")',
      'extraBudgetShare must be in [0, 1] (got 2)',
      'offRetryMs must be an integer in [0, 2592000000] (got 1.5)',
      'unknown option "color"',
      'policy must be a policy name (got "Bad Name!")',
    ]);
  });

  it('keeps valid options when another one is invalid', () => {
    const { options, errors } = resolveWorkerOptions({ policy: 'fast', offlineMaxBytes: -1, hedgeBudgetShare: 0 });
    expect(options.selection).toEqual(FAST_PRESET);
    expect(options.offlineMaxBytes).toBe(WORKER_OPTION_SCHEMA.offlineMaxBytes.default);
    expect(options.webpp).toEqual({ hedgeBudgetShare: 0 });
    expect(errors).toHaveLength(1);
  });

  it('internal overrides reach core\'s constants and the worker\'s, on the URL as _name', () => {
    const { options, errors } = parseWorkerOptions(new URLSearchParams('policy=refresh&_preset=fast&_ttlMs=300&_flushDelayMs=0&_pushPairSlackMs=100'));
    expect(errors).toEqual([]);
    expect(options.selection).toEqual({ ...FAST_PRESET, ttlMs: 300 });
    expect(options.flushDelayMs).toBe(0);
    expect(options.webpp).toEqual({ pushPairSlackMs: 100 });
    const bad = resolveWorkerOptions({}, { teleport: 1, historySize: 'many', preset: 'turbo' });
    expect(bad.errors).toEqual(['bad internal override _teleport (got 1)', 'bad internal override _historySize (got "many")', 'bad internal override _preset (got "turbo")']);
    // A site's public option wins over an internal override of the same constant.
    expect(resolveWorkerOptions({ timeoutCeilingMs: 9_000 }, { timeoutCeilingMs: 4_000 }).options.webpp).toEqual({ timeoutCeilingMs: 9_000 });
    expect(Object.keys(WEBPP_DEFAULTS)).toContain('pushPairSlackMs');
  });

  it('opt-in features come as a comma-separated list (data-features="batch"); unknown ones are reported and left out', () => {
    expect(parseWorkerOptions(new URLSearchParams('')).options.features).toEqual([]);
    const batch = parseWorkerOptions(new URLSearchParams('features=batch'));
    expect(batch.errors).toEqual([]);
    expect(batch.options.features).toEqual(['batch']);
    const odd = parseWorkerOptions(new URLSearchParams('features=batch, teleport,batch'));
    expect(odd.options.features).toEqual(['batch']);
    expect(odd.errors).toEqual(['features: unknown feature "teleport" (known: batch, offline, integrity, aggregate)']);
    expect(resolveWorkerOptions({ features: ['offline', 'batch'] }).options.features).toEqual(['offline', 'batch']);
    expect(parseWorkerOptions(new URLSearchParams('features=integrity,aggregate')).options.features).toEqual(['integrity', 'aggregate']);
  });
});
