/**
 * Reference tables in docs/origin.md that restate the code (issue 25 §9): the error codes
 * (errors.ts) and the CORS headers exposed to the worker (http/cors.ts). Each fails when the
 * code changes and the table does not. (The option tables and the response-path table are
 * generated: options-docs.test.ts; response-path.test.ts checks the path itself.)
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import * as errors from '../src/errors.js';
import { EXPOSED_HEADERS } from '../src/http/cors.js';

const ORIGIN_DOC = readFileSync(fileURLToPath(new URL('../../docs/origin.md', import.meta.url)), 'utf8');

/** The text of the section that starts with `heading`, up to the next "## ". */
function section(heading: string): string {
  const start = ORIGIN_DOC.indexOf(`\n${heading}\n`);
  if (start < 0) throw new Error(`docs/origin.md has no "${heading}"`);
  const end = ORIGIN_DOC.indexOf('\n## ', start + heading.length + 2);
  return ORIGIN_DOC.slice(start, end < 0 ? undefined : end);
}

describe('docs/origin.md agrees with the code', () => {
  it('lists every error code of errors.ts, once, with its status', () => {
    const inCode = new Map<string, number>();
    for (const [name, value] of Object.entries(errors)) {
      if (typeof value !== 'function') continue;
      const error = new (value as new (...args: unknown[]) => { code: string; statusCode: number })('a', 'b', 'c');
      expect(error.code, name).toBe(name);
      inCode.set(error.code, error.statusCode);
    }
    const rows = section('## Error codes').split('\n').flatMap((line) => {
      const match = /^\| `(WEBPP_ERR_[A-Z_]+)` \| ([^|]+) \|/.exec(line);
      return match === null ? [] : [[match[1] as string, (match[2] as string).trim()] as const];
    });
    expect(rows.map(([code]) => code).sort()).toEqual([...inCode.keys()].sort());
    for (const [code, status] of rows) {
      // "—": thrown at start-up (no response); otherwise the status the code answers with first.
      if (status === '—') expect(inCode.get(code), code).toBe(500);
      else expect(Number(/^\d{3}/.exec(status)?.[0]), code).toBe(inCode.get(code));
    }
  });

  it('shows the headers CORS exposes to the worker', () => {
    const text = section('## Serving replicas, CORS, HEAD and Range');
    const match = /access-control-expose-headers: ([\s\S]*?)\ntiming-allow-origin/.exec(text);
    expect(match?.[1]?.replace(/\s+/g, ' ').trim()).toBe(EXPOSED_HEADERS);
  });
});
