/**
 * Pre-processing of one response (paper Section 5.1): find the logical URLs an HTML page
 * or a style sheet references, match them against the replication directory, and encode
 * the matches as the bindings header (packages/core wire format). HTML pages may also get
 * the page-script tag. The page's own binding always comes first, then prefix bindings,
 * then exact ones in document order, because the encoder drops bindings from the end
 * when the header budget is exceeded.
 */
import { encodeBindings, type Binding } from '@webpp/core';
import type { DirectoryMatch, ReplicationDirectory } from '../directory/replication-directory.js';
import { isHtmlContentType } from '../html-pages.js';
import { cssReferenceUrls, htmlReferences } from './html-references.js';
import { injectScriptTag } from './inject-script.js';
import type { PreprocessResult } from './preprocess-cache.js';
import type { ResourceSizes } from './resource-sizes.js';

export type PreprocessKind = 'html' | 'css';

export interface PreprocessSettings {
  directory: ReplicationDirectory;
  maxBindingsHeaderBytes: number;
  /** Page-script path to inject into HTML, or undefined for no injection. */
  injectScriptPath: string | undefined;
  /** Body sizes for exact bindings (resource-sizes.ts); undefined: no sizes in headers. */
  sizes?: ResourceSizes | undefined;
}

/** Which responses are parsed for references. */
export function preprocessKind(contentType: string | undefined): PreprocessKind | undefined {
  if (contentType === undefined) return undefined;
  if (isHtmlContentType(contentType)) return 'html';
  if (contentType.split(';', 1)[0]?.trim().toLowerCase() === 'text/css') return 'css';
  return undefined;
}

/** The charset parameter of a Content-Type, lower case, or undefined. */
function charsetOf(contentType: string | undefined): string | undefined {
  const match = contentType === undefined ? null : /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(contentType);
  return match?.[1]?.toLowerCase();
}

/** Charsets whose bytes below 0x80 are ASCII: references can be found and a tag spliced in. */
function asciiCompatible(charset: string | undefined): boolean {
  return charset === undefined || !/^(utf-16|utf-32|ucs-2|utf-7)/.test(charset);
}

/**
 * Bindings header (and, for HTML with injection, the new body) for one response body.
 * `pageUrl` is the logical URL of the response: references resolve against it.
 */
export function preprocessBody(
  kind: PreprocessKind,
  body: Buffer,
  contentType: string | undefined,
  pageUrl: string,
  own: DirectoryMatch | undefined,
  settings: PreprocessSettings,
): PreprocessResult {
  const charset = charsetOf(contentType);
  if (!asciiCompatible(charset)) return bindingsOnly(own === undefined ? [] : [own.binding], settings);
  const utf8 = charset === undefined || charset === 'utf-8' || charset === 'utf8';
  const text = body.toString(utf8 ? 'utf8' : 'latin1');
  const references = kind === 'html' ? htmlReferences(text, pageUrl) : undefined;
  const urls = references?.urls ?? cssReferenceUrls(text, pageUrl);
  const bindings = collectBindings(own, urls, settings.directory);
  const result = bindingsOnly(bindings, settings);
  if (references !== undefined) result.embeddedUrls = references.embeddedUrls;
  result.boundUrls = [...new Set(urls)].filter((url) => settings.directory.lookup(url) !== undefined);
  if (kind === 'html' && settings.injectScriptPath !== undefined) {
    // Splice on the byte-preserving latin1 view, so that the rest of the page is untouched.
    const original = body.toString('latin1');
    const injected = injectScriptTag(original, settings.injectScriptPath);
    if (injected !== original) result.body = Buffer.from(injected, 'latin1');
  }
  return result;
}

/** The page's own binding first, then prefix bindings, then exact bindings in document order. */
function collectBindings(own: DirectoryMatch | undefined, urls: string[], directory: ReplicationDirectory): Binding[] {
  const seen = new Set<string>();
  const prefixes: Binding[] = [];
  const exact: Binding[] = [];
  const keyOf = (binding: Binding): string => (binding.prefix ? `p${binding.logical}` : `e${binding.logical}`);
  if (own !== undefined) seen.add(keyOf(own.binding));
  for (const url of urls) {
    const match = directory.lookup(url);
    if (match === undefined) continue;
    const key = keyOf(match.binding);
    if (seen.has(key)) continue;
    seen.add(key);
    (match.binding.prefix ? prefixes : exact).push(match.binding);
  }
  return own === undefined ? [...prefixes, ...exact] : [own.binding, ...prefixes, ...exact];
}

/** Encodes bindings into a header value (none when there are no bindings). */
export function bindingsOnly(unsized: Binding[], settings: Pick<PreprocessSettings, 'directory' | 'maxBindingsHeaderBytes' | 'sizes'>): PreprocessResult {
  if (unsized.length === 0) return { bindingsHeader: undefined, body: undefined, bindingCount: 0 };
  const bindings = settings.sizes === undefined ? unsized : settings.sizes.withSizes(unsized);
  const encoded = encodeBindings(
    { directoryVersion: settings.directory.version, bindings },
    { maxBytes: settings.maxBindingsHeaderBytes },
  );
  return { bindingsHeader: encoded.value, body: undefined, bindingCount: bindings.length - encoded.droppedBindings, bindings };
}
