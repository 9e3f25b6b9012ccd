/**
 * `webpp-origin check <page url>`: what a site owner runs against a deployment. Fetches the
 * page and its bindings (the `webpp-bindings` header, else the static bindings file
 * /.well-known/webpp/bindings, else a `_headers` file served as a file), then requests every
 * replica of the page's bound files the way the browser's worker would (another origin: CORS
 * mode, an `Origin` header, no cookies, redirects not followed) and reports per replica
 * what stops the worker using it (replica-findings.ts). Bounded: at most
 * `maxFilesPerReplica` files per replica server and `maxRequests` requests in all, each
 * with a timeout.
 */
import { createHash } from 'node:crypto';
import { Agent, fetch as undiciFetch } from 'undici';
import { BINDINGS_HEADER, BindingsIndex, decodeBindings, type BindingsDocument } from '@webpp/core';
import { htmlReferences } from '../bindings/html-references.js';
import { isHtmlContentType } from '../html-pages.js';
import { STATIC_BINDINGS_PATH } from '@webpp/core';
import { loopbackAwareLookup } from '../sync/cluster-client.js';
import { replicaFindings, type Finding } from './replica-findings.js';

interface CheckOptions {
  pageUrl: string;
  /** Per request. Default 10 s. */
  timeoutMs?: number;
  /** Files requested from each replica server. Default 3. */
  maxFilesPerReplica?: number;
  /** All replica requests together. Default 60. */
  maxRequests?: number;
  /** The worker script's path on the page's origin. Default /webpp-sw.js. */
  workerPath?: string;
}

interface FileCheck {
  logicalUrl: string;
  physicalUrl: string;
  findings: Finding[];
}

interface ReplicaReport {
  /** The replica server's origin. */
  server: string;
  usable: boolean;
  files: FileCheck[];
}

export interface CheckReport {
  pageUrl: string;
  pageStatus: number | undefined;
  /** Where the bindings came from; undefined when none were found. */
  bindingsFrom: 'header' | 'static bindings file' | '_headers' | undefined;
  bindingCount: number;
  /** Problems of the page and the site as a whole (no bindings, no worker script, …). */
  siteFindings: Finding[];
  replicas: ReplicaReport[];
  /** False when the page, its bindings or a replica is unusable. */
  ok: boolean;
}

/** Bodies larger than this are not hashed (a digest check needs the whole body). */
const MAX_HASHED_BODY_BYTES = 16 * 1024 * 1024;

interface Answer {
  status: number;
  headers: Headers;
  body: Uint8Array | undefined;
}

type Get = (url: string, headers?: Record<string, string>) => Promise<Answer>;

function getter(timeoutMs: number): { get: Get; close: () => Promise<void> } {
  // *.localhost is 127.0.0.1 (RFC 6761), as in browsers, whatever the system resolver says.
  const dispatcher = new Agent({ connect: { lookup: loopbackAwareLookup } });
  const get: Get = async (url, headers = {}) => {
    const response = await undiciFetch(url, { headers, redirect: 'manual', dispatcher, signal: AbortSignal.timeout(timeoutMs) });
    const length = Number(response.headers.get('content-length') ?? '0');
    let body: Uint8Array | undefined;
    if (length > MAX_HASHED_BODY_BYTES) await response.body?.cancel();
    else {
      const bytes = new Uint8Array(await response.arrayBuffer());
      body = bytes.byteLength > MAX_HASHED_BODY_BYTES ? undefined : bytes;
    }
    return { status: response.status, headers: response.headers as unknown as Headers, body };
  };
  return { get, close: () => dispatcher.close() };
}

function describeError(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  if (cause?.code !== undefined) return cause.code;
  if ((error as Error).name === 'TimeoutError') return 'timed out';
  return cause?.message ?? (error as Error).message;
}

function integrityOf(body: Uint8Array): string {
  return `sha256-${createHash('sha256').update(body).digest('base64')}`;
}

/** The bindings values of the rule for `path` in a Netlify-style `_headers` file. */
function headersFileValues(text: string, path: string): string[] {
  const values: string[] = [];
  let matches = false;
  for (const line of text.split('\n')) {
    if (line.trim() === '' || line.trim().startsWith('#')) continue;
    if (!/^\s/.test(line)) {
      matches = line.trim() === path;
      continue;
    }
    const separator = line.indexOf(':');
    if (matches && separator > 0 && line.slice(0, separator).trim().toLowerCase() === BINDINGS_HEADER) values.push(line.slice(separator + 1).trim());
  }
  return values;
}

async function findBindings(get: Get, page: Answer, pageUrl: URL, findings: Finding[]): Promise<{ documents: BindingsDocument[]; from: CheckReport['bindingsFrom'] }> {
  const decodeAll = (values: string[], where: string): BindingsDocument[] =>
    values.flatMap((value) => {
      const decoded = decodeBindings(value);
      if (decoded.ok) return [decoded.document];
      findings.push({ severity: 'unusable', message: `${where} holds a bindings value that does not decode (${decoded.error.code}: ${decoded.error.message})` });
      return [];
    });
  const header = page.headers.get(BINDINGS_HEADER);
  if (header !== null) return { documents: decodeAll([header], `the page's ${BINDINGS_HEADER} header`), from: 'header' };

  const fileUrl = new URL(STATIC_BINDINGS_PATH, pageUrl).href;
  try {
    const file = await get(fileUrl);
    if (file.status === 200 && file.body !== undefined) {
      const lines = new TextDecoder().decode(file.body).split('\n').map((line) => line.trim()).filter((line) => line !== '' && !line.startsWith('#'));
      if (lines.length > 0) return { documents: decodeAll(lines, fileUrl), from: 'static bindings file' };
    }
  } catch {
    // no static bindings file: try _headers
  }
  try {
    const file = await get(new URL('/_headers', pageUrl).href);
    if (file.status === 200 && file.body !== undefined) {
      const text = new TextDecoder().decode(file.body);
      const path = pageUrl.pathname.endsWith('/index.html') ? pageUrl.pathname.slice(0, -'index.html'.length) : pageUrl.pathname;
      const values = [...new Set([...headersFileValues(text, pageUrl.pathname), ...headersFileValues(text, path)])];
      if (values.length > 0) return { documents: decodeAll(values, '/_headers'), from: '_headers' };
    }
  } catch {
    // none either
  }
  return { documents: [], from: undefined };
}

export async function checkDeployment(options: CheckOptions): Promise<CheckReport> {
  const { timeoutMs = 10_000, maxFilesPerReplica = 3, maxRequests = 60, workerPath = '/webpp-sw.js' } = options;
  const pageUrl = new URL(options.pageUrl);
  const pageOrigin = pageUrl.origin;
  const siteFindings: Finding[] = [];
  const { get, close } = getter(timeoutMs);
  try {
    let page: Answer;
    try {
      page = await get(pageUrl.href, { accept: 'text/html,*/*;q=0.8' });
    } catch (error) {
      siteFindings.push({ severity: 'unusable', message: `the page is not reachable (${describeError(error)})` });
      return { pageUrl: pageUrl.href, pageStatus: undefined, bindingsFrom: undefined, bindingCount: 0, siteFindings, replicas: [], ok: false };
    }
    if (page.status !== 200) siteFindings.push({ severity: 'unusable', message: `the page answers ${page.status}${page.headers.get('location') === null ? '' : ` (to ${page.headers.get('location')})`}: check the page itself` });
    const html = page.body === undefined ? '' : new TextDecoder().decode(page.body);
    const { documents, from } = await findBindings(get, page, pageUrl, siteFindings);
    const index = new BindingsIndex();
    for (const document of documents) index.apply(document);
    if (from === undefined) {
      siteFindings.push({ severity: 'unusable', message: `no bindings: the page has no ${BINDINGS_HEADER} header and the site no ${STATIC_BINDINGS_PATH} (build with webpp-origin build, or serve with webpp-origin)` });
    }
    if (!/<script[^>]+src=["']?[^"'>]*webpp\.js/i.test(html) && isHtmlContentType(page.headers.get('content-type') ?? undefined)) {
      siteFindings.push({ severity: 'warning', message: 'the page has no <script src="/webpp.js"> tag: nothing registers the worker from it (build with --inject, or add the tag)' });
    }
    await checkWorkerScript(get, new URL(workerPath, pageUrl).href, siteFindings);

    // The logical URLs to try: the files the page references, then the exact bindings.
    const digests = new Map(documents.flatMap((document) => (document.digests ?? []).map((digest) => [digest.logical, digest.integrity] as const)));
    const references = htmlReferences(html, pageUrl.href).urls;
    const exact = documents.flatMap((document) => document.bindings.filter((binding) => !binding.prefix).map((binding) => binding.logical));
    const byServer = new Map<string, { logicalUrl: string; physicalUrl: string }[]>();
    for (const logicalUrl of [...new Set([...references, ...exact])]) {
      const resolved = index.resolve(logicalUrl);
      for (const physicalUrl of resolved?.physicalUrls ?? []) {
        const server = new URL(physicalUrl).origin;
        const files = byServer.get(server) ?? [];
        if (files.length < maxFilesPerReplica && !files.some((file) => file.physicalUrl === physicalUrl)) files.push({ logicalUrl, physicalUrl });
        byServer.set(server, files);
      }
    }
    if (from !== undefined && byServer.size === 0) {
      siteFindings.push({ severity: 'warning', message: 'no file the page references is bound to a replica: the worker has nothing to choose for this page' });
    }

    let budget = maxRequests;
    const replicas: ReplicaReport[] = [];
    for (const [server, files] of byServer) {
      const checked: FileCheck[] = [];
      for (const file of files) {
        if (budget <= 0) break;
        budget -= 1;
        checked.push({ ...file, findings: await checkFile(get, pageOrigin, file.physicalUrl, digests.get(file.logicalUrl)) });
      }
      replicas.push({ server, files: checked, usable: checked.every((file) => file.findings.every((finding) => finding.severity !== 'unusable')) });
    }
    const ok = siteFindings.every((finding) => finding.severity !== 'unusable') && replicas.every((replica) => replica.usable);
    return { pageUrl: pageUrl.href, pageStatus: page.status, bindingsFrom: from, bindingCount: index.size, siteFindings, replicas, ok };
  } finally {
    await close();
  }
}

/** The request the worker sends for a file on `physicalUrl` (sw/src/physical-request.ts), and what is wrong with the answer. */
async function checkFile(get: Get, pageOrigin: string, physicalUrl: string, expectedIntegrity: string | undefined): Promise<Finding[]> {
  const crossOrigin = new URL(physicalUrl).origin !== pageOrigin;
  const nowMs = Date.now();
  try {
    const answer = await get(physicalUrl, crossOrigin ? { origin: pageOrigin, accept: '*/*' } : { accept: '*/*' });
    return replicaFindings({
      pageOrigin,
      physicalUrl,
      status: answer.status,
      headers: answer.headers,
      ...(answer.body === undefined || answer.status !== 200 ? {} : { bodyIntegrity: integrityOf(answer.body) }),
      ...(expectedIntegrity === undefined ? {} : { expectedIntegrity }),
      nowMs,
    });
  } catch (error) {
    return replicaFindings({ pageOrigin, physicalUrl, error: describeError(error), nowMs });
  }
}

/** The worker script must be there, and a long HTTP cache lifetime delays every update of it. */
async function checkWorkerScript(get: Get, url: string, findings: Finding[]): Promise<void> {
  try {
    const answer = await get(url);
    if (answer.status !== 200) {
      findings.push({ severity: 'unusable', message: `the worker script ${url} answers ${answer.status}: no worker, so no replica is ever used` });
      return;
    }
    const maxAge = /max-age=(\d+)/i.exec(answer.headers.get('cache-control') ?? '')?.[1];
    if (maxAge !== undefined && Number(maxAge) > 0 && !/no-cache/i.test(answer.headers.get('cache-control') ?? '')) {
      findings.push({ severity: 'warning', message: `the worker script is cached for ${maxAge} s (Cache-Control): a new worker reaches visitors up to that late; serve it with "Cache-Control: no-cache"` });
    }
  } catch (error) {
    findings.push({ severity: 'unusable', message: `the worker script ${url} is not reachable (${describeError(error)})` });
  }
}
