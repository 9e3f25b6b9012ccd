/**
 * The directory seed file: a JSON document listing the replication directory's initial
 * entries (format documented in docs/origin.md, "Directory file").
 *
 *   {
 *     "formatVersion": 1,
 *     "logicalOrigin": "http://a.localhost:8081",
 *     "entries": [
 *       { "logical": "/misc/file.txt",
 *         "physical": ["http://server1.example/files/miscFile.txt", "http://server2.example/misc/file.txt"] },
 *       { "logical": "/images/*", "servers": ["http://a.localhost:8081", "http://b.localhost:8082"] }
 *     ]
 *   }
 *
 * `logical` may be a path (resolved against `logicalOrigin`, else the server's logical
 * origin) or an absolute URL. `physical` lists absolute physical URLs; `servers` is the
 * shorthand for "the same path on each of these servers".
 */
import { readFile } from 'node:fs/promises';
import { Ajv } from 'ajv';
import { WEBPP_ERR_DIRECTORY_FILE } from '../errors.js';
import { formatUrlSpec, parseUrlSpec } from '@webpp/core';

export interface DirectoryFileEntry {
  logical: string;
  physical?: string[];
  servers?: string[];
}

export interface DirectoryFile {
  formatVersion: 1;
  logicalOrigin?: string;
  entries: DirectoryFileEntry[];
}

const directoryFileSchema = {
  $id: 'https://webpp.dev/schemas/directory-file.json',
  type: 'object',
  additionalProperties: false,
  required: ['formatVersion', 'entries'],
  properties: {
    $schema: { type: 'string' },
    formatVersion: { const: 1 },
    logicalOrigin: { type: 'string', minLength: 1 },
    entries: {
      type: 'array',
      maxItems: 100_000,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['logical'],
        anyOf: [{ required: ['physical'] }, { required: ['servers'] }],
        properties: {
          logical: { type: 'string', minLength: 1, maxLength: 4096 },
          physical: { type: 'array', minItems: 1, items: { type: 'string', minLength: 1, maxLength: 4096 } },
          servers: { type: 'array', minItems: 1, items: { type: 'string', minLength: 1, maxLength: 4096 } },
        },
      },
    },
  },
} as const;

const validateFile = new Ajv({ allErrors: true }).compile<DirectoryFile>(directoryFileSchema);

/** (logical, physical) pairs in directory notation ("…/*" for prefixes). */
export type DirectoryPair = [logical: string, physical: string];

/** Reads and validates a directory file; throws WEBPP_ERR_DIRECTORY_FILE naming the problem. */
export async function readDirectoryFile(path: string, defaultLogicalOrigin: string): Promise<DirectoryPair[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new WEBPP_ERR_DIRECTORY_FILE(path, (error as Error).message);
  }
  return directoryPairsFrom(parseDirectoryJson(text, path), defaultLogicalOrigin, path);
}

/**
 * JSON.parse with a WEBPP_ERR_DIRECTORY_FILE on one line: V8's message quotes the text
 * around the error, line breaks included, which would split the operator's error in two.
 */
export function parseDirectoryJson(text: string, path: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new WEBPP_ERR_DIRECTORY_FILE(path, `not JSON (${(error as Error).message.replace(/\s*[\r\n]+\s*/g, ' ')})`);
  }
}

/** A property that is a known one mistyped: "server" for "servers". */
const KNOWN_ENTRY_PROPERTIES = ['logical', 'physical', 'servers'];
const KNOWN_FILE_PROPERTIES = ['$schema', 'formatVersion', 'logicalOrigin', 'entries'];

function closest(name: string, known: string[]): string | undefined {
  const lower = name.toLowerCase();
  return known.find((candidate) => {
    const other = candidate.toLowerCase();
    return other === lower || other === `${lower}s` || `${other}s` === lower || (Math.abs(other.length - lower.length) <= 1 && (other.startsWith(lower) || lower.startsWith(other)));
  });
}

/**
 * Ajv's errors as one readable line. An unknown property is named (with the known one it
 * resembles), and then the "must match a schema in anyOf" noise it causes is left out: a
 * `server` for `servers` typo said four times that something was missing, never what.
 */
function describeSchemaErrors(errors: NonNullable<typeof validateFile.errors>): string {
  const unknown = errors.filter((error) => error.keyword === 'additionalProperties');
  const withUnknown = new Set(unknown.map((error) => error.instancePath));
  const isAnyOfNoise = (error: (typeof errors)[number]): boolean =>
    error.keyword === 'anyOf' || (error.keyword === 'required' && ['physical', 'servers'].includes(String((error.params as { missingProperty?: unknown }).missingProperty)));
  const shown = errors.filter((error) => !(withUnknown.has(error.instancePath) && isAnyOfNoise(error)));
  // Without an unknown property, the anyOf's two "required" errors say the same as its own one.
  const deduplicated = shown.filter((error) => !(error.keyword === 'required' && isAnyOfNoise(error) && shown.some((other) => other.keyword === 'anyOf' && other.instancePath === error.instancePath)));
  return deduplicated
    .map((error) => {
      const where = error.instancePath || '/';
      if (error.keyword === 'additionalProperties') {
        const property = String((error.params as { additionalProperty?: unknown }).additionalProperty);
        const known = where.startsWith('/entries/') ? KNOWN_ENTRY_PROPERTIES : KNOWN_FILE_PROPERTIES;
        const guess = closest(property, known);
        return `${where} has an unknown property "${property}"${guess === undefined ? '' : ` (did you mean "${guess}"?)`}; known: ${known.join(', ')}`;
      }
      if (error.keyword === 'anyOf') return `${where} needs "physical" or "servers"`;
      return `${where} ${error.message ?? 'is invalid'}`;
    })
    .join('; ');
}

/** Validates a parsed directory file and expands it into pairs. */
export function directoryPairsFrom(json: unknown, defaultLogicalOrigin: string, source = '<inline>'): DirectoryPair[] {
  if (!validateFile(json)) {
    throw new WEBPP_ERR_DIRECTORY_FILE(source, describeSchemaErrors(validateFile.errors ?? []));
  }
  const base = json.logicalOrigin ?? defaultLogicalOrigin;
  if (parseUrlSpec(base) === undefined) throw new WEBPP_ERR_DIRECTORY_FILE(source, `logicalOrigin ${base} is not an http(s) URL`);
  const pairs: DirectoryPair[] = [];
  json.entries.forEach((entry, index) => {
    const where = `/entries/${index}`;
    const logical = parseUrlSpec(entry.logical, base);
    if (logical === undefined) {
      throw new WEBPP_ERR_DIRECTORY_FILE(source, `${where}/logical ${JSON.stringify(entry.logical)} is not a URL, path or "/*" prefix`);
    }
    const logicalPath = new URL(logical.url).pathname + new URL(logical.url).search;
    for (const physical of entry.physical ?? []) {
      const spec = parseUrlSpec(physical);
      if (spec === undefined) throw new WEBPP_ERR_DIRECTORY_FILE(source, `${where}/physical ${JSON.stringify(physical)} is not an absolute URL`);
      if (spec.prefix !== logical.prefix) {
        throw new WEBPP_ERR_DIRECTORY_FILE(source, `${where}: a "/*" logical URL needs "/*" physical URLs, and only then`);
      }
      pairs.push([formatUrlSpec(logical), formatUrlSpec(spec)]);
    }
    for (const server of entry.servers ?? []) {
      const serverSpec = parseUrlSpec(server);
      if (serverSpec === undefined || serverSpec.prefix) {
        throw new WEBPP_ERR_DIRECTORY_FILE(source, `${where}/servers ${JSON.stringify(server)} is not an http(s) origin`);
      }
      const serverUrl = new URL(serverSpec.url);
      // A path or query would be dropped: "https://cdn.example/mirror" must not silently place the copy at the root.
      if (serverUrl.pathname !== '/' || serverUrl.search !== '') {
        throw new WEBPP_ERR_DIRECTORY_FILE(source, `${where}/servers ${JSON.stringify(server)} is not an http(s) origin: it has a path or a query (list full URLs in "physical" instead)`);
      }
      const origin = serverUrl.origin;
      const physical = parseUrlSpec(`${origin}${logicalPath}${logical.prefix ? '*' : ''}`);
      if (physical === undefined) throw new WEBPP_ERR_DIRECTORY_FILE(source, `${where}: cannot place ${entry.logical} on ${server}`);
      pairs.push([formatUrlSpec(logical), formatUrlSpec(physical)]);
    }
  });
  return pairs;
}
