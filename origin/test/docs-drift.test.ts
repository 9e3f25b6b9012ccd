/**
 * Reference tables in docs/origin.md that restate the code (issue 25 §9): the error codes
 * (errors.ts), the CORS headers exposed to the worker (http/cors.ts), and the response-path
 * plugins in the order webppOrigin registers them (plugin.ts). Each fails when the code
 * changes and the table does not. (The option tables are generated: options-docs.test.ts.)
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import * as errors from '../src/errors.js';
import { EXPOSED_HEADERS } from '../src/http/cors.js';
import { buildApp } from './helpers.js';

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

  it('lists the response-path plugins in the order webppOrigin registers them', async () => {
    const app = await buildApp();
    const tree = app.printPlugins();
    await app.close();
    // The direct children of @webpp/origin, up to the last response-path plugin.
    const registered = tree.split('\n').flatMap((line) => /^│ [├└]─[─┬] (webpp-[a-z-]+) /.exec(line)?.[1] ?? []);
    const responsePath = registered.slice(0, registered.indexOf('webpp-concurrency-gate-release') + 1);
    expect(responsePath.length).toBeGreaterThan(10);
    const documented = section('## The response path: one plugin per concern').split('\n').flatMap((line) => /^\| \d+ \| `(webpp-[a-z-]+)`/.exec(line)?.[1] ?? []);
    expect(documented).toEqual(responsePath);
  });
});
