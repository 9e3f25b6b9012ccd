/**
 * The logical origin when the `logicalOrigin` option is absent: the directory file's (and
 * the inline directory's) `logicalOrigin`, so that a server started with only the shared
 * directory file registers replicas under the site's logical URLs, not under its own
 * (issue 23, trap 1). When the option and a directory name different origins, the server
 * refuses to start and names both: one of them is a mistake, and guessing would register
 * every replica under the wrong URL without a word.
 */
import { readFile } from 'node:fs/promises';
import { canonicalUrl } from '@webpp/core';
import { WEBPP_ERR_BAD_OPTIONS, WEBPP_ERR_DIRECTORY_FILE } from '../errors.js';
import type { WebppOriginOptions } from '../options.js';
import { parseDirectoryJson } from './directory-file.js';

/** `scheme://host[:port]` of a URL, or the text itself when it is no http(s) URL (validation reports it later). */
function originOf(value: string): string {
  const url = canonicalUrl(value);
  return url === undefined ? value : new URL(url).origin;
}

function declaredOrigin(json: unknown): string | undefined {
  if (typeof json !== 'object' || json === null) return undefined;
  const value = (json as { logicalOrigin?: unknown }).logicalOrigin;
  return typeof value === 'string' ? value : undefined;
}

/**
 * The options with `logicalOrigin` filled in from the directory file or the inline
 * directory when absent. Throws WEBPP_ERR_BAD_OPTIONS when they disagree with the option
 * or with each other; a file that cannot be read or parsed throws WEBPP_ERR_DIRECTORY_FILE.
 */
export async function withDirectoryLogicalOrigin<T extends Pick<WebppOriginOptions, 'directoryFile' | 'directory' | 'logicalOrigin'>>(options: T): Promise<T> {
  const declared: { source: string; origin: string }[] = [];
  if (typeof options.directoryFile === 'string') {
    let text: string;
    try {
      text = await readFile(options.directoryFile, 'utf8');
    } catch (error) {
      throw new WEBPP_ERR_DIRECTORY_FILE(options.directoryFile, (error as Error).message);
    }
    const origin = declaredOrigin(parseDirectoryJson(text, options.directoryFile));
    if (origin !== undefined) declared.push({ source: `the directory file ${options.directoryFile}`, origin });
  }
  const inline = declaredOrigin(options.directory);
  if (inline !== undefined) declared.push({ source: 'the inline directory (options.directory)', origin: inline });

  const given = options.logicalOrigin === undefined ? undefined : { source: 'the logicalOrigin option (--logical-origin)', origin: options.logicalOrigin };
  const all = given === undefined ? declared : [given, ...declared];
  const first = all[0];
  if (first === undefined) return options;
  for (const other of all.slice(1)) {
    if (originOf(other.origin) !== originOf(first.origin)) {
      throw new WEBPP_ERR_BAD_OPTIONS(
        `${first.source} says the logical origin is ${first.origin}, but ${other.source} says ${other.origin}: ` +
          'they must agree (the logical origin is the site address visitors type; give it once, in the directory file)',
      );
    }
  }
  return given === undefined ? { ...options, logicalOrigin: first.origin } : options;
}
