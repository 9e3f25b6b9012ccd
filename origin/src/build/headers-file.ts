/**
 * The `_headers` file of Netlify and Cloudflare Pages: a URL path (or `/*`) on its own line,
 * then the headers for it, indented, one `Name: value` a line. Hosts merge the headers of
 * every rule that matches a path. We write one rule for every path (CORS and
 * Timing-Allow-Origin, which the worker needs when this host is a mirror; see
 * origin/src/http/cors.ts), one for the worker script, and one per page or stylesheet with
 * its `webpp-bindings` value.
 */
import { BINDINGS_HEADER } from '@webpp/core';
import { EXPOSED_HEADERS } from '../http/cors.js';

export type HeaderRules = Map<string, [name: string, value: string][]>;

/** Headers every file of the site gets, so that any copy of it can serve as a replica. */
export function siteWideRules(workerPath: string): HeaderRules {
  return new Map([
    [
      '/*',
      [
        ['Access-Control-Allow-Origin', '*'],
        ['Access-Control-Expose-Headers', EXPOSED_HEADERS],
        ['Timing-Allow-Origin', '*'],
      ],
    ],
    [
      workerPath,
      [
        ['Service-Worker-Allowed', '/'],
        ['Cache-Control', 'no-cache'],
      ],
    ],
  ]);
}

export function addBindingsRule(rules: HeaderRules, path: string, bindingsValue: string): void {
  const headers = rules.get(path) ?? [];
  headers.push([BINDINGS_HEADER, bindingsValue]);
  rules.set(path, headers);
}

export function headersFileText(rules: HeaderRules): string {
  let text = '# webpp: written by "webpp-origin build" (docs/static-hosting.md)\n';
  for (const [path, headers] of rules) {
    text += `${path}\n`;
    for (const [name, value] of headers) text += `  ${name}: ${value}\n`;
  }
  return text;
}

/**
 * Parses a `_headers` text back into rules (for tests and for plain servers that apply it).
 * Lines starting with `#` are comments.
 */
export function parseHeadersFile(text: string): HeaderRules {
  const rules: HeaderRules = new Map();
  let current: [string, string][] | undefined;
  for (const line of text.split(/\r?\n/)) {
    if (line.trim() === '' || line.trimStart().startsWith('#')) continue;
    if (!/^\s/.test(line)) {
      current = rules.get(line.trim()) ?? [];
      rules.set(line.trim(), current);
      continue;
    }
    const colon = line.indexOf(':');
    if (current === undefined || colon < 0) continue;
    current.push([line.slice(0, colon).trim(), line.slice(colon + 1).trim()]);
  }
  return rules;
}
