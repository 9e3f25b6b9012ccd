/**
 * The evaluation tables of the README and docs/evaluation.md are generated from the committed
 * docs/benchmarks/results.json (npm run docs:evaluation). This fails when a new run is
 * committed without regenerating them, or a generated table is edited by hand (issue 25 §9:
 * the README quoted peak 1.32 while results.json said 1.524).
 */
import { describe, expect, it } from 'vitest';
import { outOfDate } from './docs-evaluation.js';

describe('generated evaluation tables', () => {
  it('match docs/benchmarks/results.json (run `npm run docs:evaluation` after committing results)', () => {
    expect(outOfDate()).toEqual([]);
  });
});
