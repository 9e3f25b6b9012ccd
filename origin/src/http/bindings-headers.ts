/**
 * The bindings header of a response (paper Section 3.2: the server tells the client about
 * replicas in the response, so binding costs no extra round trip), built from
 * pre-processing results held in the PreprocessCache under three kinds of key:
 * - a parsed page or stylesheet with a validator: page URL + its ETag or Last-Modified;
 * - a parsed body without a validator (a dynamic route): page URL + a digest of the body;
 * - any other response: page URL + "own:" + its ETag, for the resource's own binding.
 * Every key also holds the directory version and the pre-processing variant, so a changed
 * file or a changed directory can never be answered from a stale entry.
 */
import { createHash } from 'node:crypto';
import { encodeBindings } from '@webpp/core';
import type { ContentDigests } from '../bindings/content-digests.js';
import { PreprocessCache, type PreprocessResult } from '../bindings/preprocess-cache.js';
import { bindingsOnly, type PreprocessSettings } from '../bindings/preprocess.js';
import type { DirectoryMatch, ReplicationDirectory } from '../directory/replication-directory.js';

/** Most URLs looked up for digests per response (bounds the hashing one page can cause). */
const MAX_DIGESTS_PER_HEADER = 256;

export interface BindingsHeadersOptions {
  cache: PreprocessCache;
  settings: PreprocessSettings;
  /** Content digests of bound URLs (contentDigests option); undefined when off. */
  digests: ContentDigests | undefined;
}

export class BindingsHeaders {
  private readonly directory: ReplicationDirectory;
  readonly cache: PreprocessCache;
  readonly settings: PreprocessSettings;
  private readonly digests: ContentDigests | undefined;
  /** What else changes a result: the injected script and the header size limit. */
  private variant = '';

  constructor(options: BindingsHeadersOptions) {
    ({ cache: this.cache, settings: this.settings, digests: this.digests } = options);
    this.directory = options.settings.directory;
    this.setInjectScriptPath(this.settings.injectScriptPath);
  }

  /** The script tag injected into pages (undefined: none); a feature registered at start-up may add to its query. */
  setInjectScriptPath(path: string | undefined): void {
    this.settings.injectScriptPath = path;
    this.variant = `${path ?? '-'}|${this.settings.maxBindingsHeaderBytes}`;
  }

  /** Key of a parsed response with a validator (ETag or Last-Modified). */
  validatorKey(pageUrl: string, validator: string): string {
    return PreprocessCache.key(pageUrl, validator, this.directory.version, this.variant);
  }

  /** Key of a parsed response without a validator: its body's digest stands in. */
  bodyKey(pageUrl: string, body: Buffer): string {
    return this.validatorKey(pageUrl, `sha1:${createHash('sha1').update(body).digest('base64')}`);
  }

  /** The header of a response that is not parsed: the resource's own binding, if any. */
  async ownHeader(own: DirectoryMatch | undefined, pageUrl: string, etag: string | undefined): Promise<string | undefined> {
    if (own === undefined) return undefined;
    const key = this.validatorKey(pageUrl, `own:${etag ?? ''}`);
    let result = this.cache.get(key);
    if (result === undefined) {
      result = bindingsOnly([own.binding], this.settings);
      this.cache.set(key, result);
    }
    return this.headerOf(result, pageUrl);
  }

  /**
   * The header of a result, with the digests of the response's own URL and of the URLs its
   * bindings cover (content-digests.ts) when digests are on and any is known. Re-encoded
   * only when the digests changed.
   */
  async headerOf(result: PreprocessResult, pageUrl: string): Promise<string | undefined> {
    if (this.digests === undefined || result.bindings === undefined || result.bindingsHeader === undefined) return result.bindingsHeader;
    const urls = [pageUrl, ...(result.boundUrls ?? [])].slice(0, MAX_DIGESTS_PER_HEADER);
    const found = await this.digests.digestsOf(urls);
    if (found.length === 0) return result.bindingsHeader;
    const fingerprint = found.map((digest) => `${digest.logical} ${digest.integrity}`).join('\n');
    if (result.digested?.fingerprint === fingerprint) return result.digested.header;
    const encoded = encodeBindings(
      { directoryVersion: this.directory.version, bindings: result.bindings, digests: found },
      { maxBytes: this.settings.maxBindingsHeaderBytes },
    );
    result.digested = { fingerprint, header: encoded.value };
    return encoded.value;
  }
}
