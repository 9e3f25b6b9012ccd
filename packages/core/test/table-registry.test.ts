/**
 * The table family of policies resolves apart from the registry (the worker's policies
 * add-on carries it without the webpp policy), and the registry still resolves every name.
 */
import { describe, expect, it } from 'vitest';
import { createPolicy, createTablePolicy, policyNames } from '../src/index.js';

const deps = { random: () => 0.5, now: () => 0 };

describe('createTablePolicy', () => {
  it('makes every registered policy but webpp, and single-<n>', () => {
    for (const name of policyNames().filter((candidate) => candidate !== 'webpp')) {
      expect(createTablePolicy(name, deps)?.name, name).toBe(createPolicy(name, deps)?.name);
    }
    expect(createTablePolicy('single-3', deps)?.name).toBe(createPolicy('single-3', deps)?.name);
  });

  it('knows no webpp and no unknown name; the registry still has webpp', () => {
    expect(createTablePolicy('webpp', deps)).toBeUndefined();
    expect(createTablePolicy('nope', deps)).toBeUndefined();
    expect(createPolicy('webpp', deps)?.name).toBe('webpp');
    expect(createPolicy('single-0', deps)).toBeUndefined();
  });

  it('rejects invalid selection options, as the registry does', () => {
    expect(() => createTablePolicy('paper', deps, { selection: { selectPercentile: 500 } })).toThrow(RangeError);
  });
});
