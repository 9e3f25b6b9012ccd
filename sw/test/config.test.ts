import { FAST_PRESET, PAPER_DEFAULTS } from '@webpp/core';
import { describe, expect, it } from 'vitest';
import { DEFAULT_WORKER_OPTIONS, parseWorkerOptions, resolveWorkerOptions } from '../src/config.js';

describe('worker options', () => {
  it('defaults to the webpp policy, and to the paper parameters for the extended Refresh family', () => {
    const { options, errors } = parseWorkerOptions(new URLSearchParams(''));
    expect(errors).toEqual([]);
    expect(options.preset).toBe('paper');
    expect(options.selection).toEqual(PAPER_DEFAULTS);
    expect(options.policy).toBe('webpp');
    expect(options.flushDelayMs).toBe(DEFAULT_WORKER_OPTIONS.flushDelayMs);
  });

  it('takes the fast preset and overrides from the worker URL', () => {
    const { options, errors } = parseWorkerOptions(new URLSearchParams('preset=fast&ttlMs=5000&flushDelayMs=250'));
    expect(errors).toEqual([]);
    expect(options.selection).toEqual({ ...FAST_PRESET, ttlMs: 5000 });
    expect(options.flushDelayMs).toBe(250);
  });

  it('resumeMinBytes: bodies from 64 KiB resume by default; the script tag can change it, not to nonsense', () => {
    expect(parseWorkerOptions(new URLSearchParams('')).options.resumeMinBytes).toBe(65_536);
    expect(parseWorkerOptions(new URLSearchParams('resumeMinBytes=0')).options.resumeMinBytes).toBe(0);
    const bad = parseWorkerOptions(new URLSearchParams('resumeMinBytes=-1'));
    expect(bad.options.resumeMinBytes).toBe(65_536);
    expect(bad.errors).toEqual([expect.stringContaining('resumeMinBytes must be an integer')]);
  });

  it('reports bad settings and keeps going with the defaults', () => {
    const { options, errors } = parseWorkerOptions(
      new URLSearchParams('preset=turbo&ttlMs=soon&selectPercentile=120&historySize=0&color=blue'),
    );
    expect(options.selection).toEqual(PAPER_DEFAULTS);
    expect(options.historySize).toBe(DEFAULT_WORKER_OPTIONS.historySize);
    expect(errors).toEqual([
      'ttlMs must be a number (got "soon")',
      'unknown option "color"',
      'preset must be "paper" or "fast" (got "turbo")',
      expect.stringContaining('selectPercentile'),
      'historySize must be an integer in [1, 5000] (got 0)',
    ]);
  });

  it('keeps valid overrides when another one is invalid', () => {
    const { options, errors } = resolveWorkerOptions({ preset: 'fast', policy: 'Bad Name!', historySize: 50 });
    expect(options.selection).toEqual(FAST_PRESET);
    expect(options.policy).toBe('webpp'); // the default
    expect(options.historySize).toBe(50);
    expect(errors).toHaveLength(1);
  });

  it('policy=paper and policy=fast run the extended Refresh with that preset\'s values', () => {
    const paper = parseWorkerOptions(new URLSearchParams('policy=paper&preset=fast'));
    expect(paper.options.policy).toBe('paper');
    expect(paper.options.selection).toEqual(PAPER_DEFAULTS);
    expect(paper.errors).toEqual(['policy "paper" runs with preset "paper" (got preset "fast")']);
    const fast = parseWorkerOptions(new URLSearchParams('policy=fast&ttlMs=5000'));
    expect(fast.errors).toEqual([]);
    expect(fast.options.selection).toEqual({ ...FAST_PRESET, ttlMs: 5000 });
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
