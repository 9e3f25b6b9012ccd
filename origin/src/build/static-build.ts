/**
 * Static hosting mode (`webpp-origin build`, docs/static-hosting.md): pre-processes a folder
 * offline, as the origin does at run time (paper Section 5.1), for hosts that run no webpp
 * server. Every HTML page and stylesheet gets the bindings header the origin would send
 * (written to `_headers`, and, for hosts that set no headers, to the static bindings file);
 * HTML pages may get the page-script tag; the page script and the worker are copied beside
 * them.
 */
import { copyFile, mkdir, readdir, readFile, realpath, stat, writeFile } from 'node:fs/promises';
import { isHiddenPath } from '../http/hidden-paths.js';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { encodeBindings, type Binding } from '@webpp/core';
import { ReplicationDirectory } from '../directory/replication-directory.js';
import { directoryPairsFrom, parseDirectoryJson } from '../directory/directory-file.js';
import { withDirectoryLogicalOrigin } from '../directory/logical-origin.js';
import { reservedPairReason } from '../reserved-paths.js';
import { preprocessBody, type PreprocessKind, type PreprocessSettings } from '../bindings/preprocess.js';
import { ClientScripts, PAGE_SCRIPT_FILE, WORKER_ADDON_FILES, WORKER_SCRIPT_FILE, workerAddonPath } from '../client-scripts.js';
import { WEBPP_ERR_BAD_OPTIONS, WEBPP_ERR_CLIENT_BUNDLE_MISSING, WEBPP_ERR_DIRECTORY_FILE } from '../errors.js';
import { addBindingsRule, headersFileText, siteWideRules } from './headers-file.js';
import { STATIC_BINDINGS_PATH } from '@webpp/core';
import { encodeBindingLines, staticBindingsText, uniqueBindings } from './static-bindings-file.js';

const HEADERS_FILE = '_headers';
/** GitHub Pages runs Jekyll, which leaves out dot folders such as /.well-known/, unless this file exists. */
const NO_JEKYLL_FILE = '.nojekyll';
const DEFAULT_MAX_HEADER_BYTES = 8_192;

export interface StaticBuildOptions {
  inDir: string;
  outDir: string;
  /** Path of the directory file (docs/origin.md, "Directory file"). */
  directoryFile: string;
  /** Origin of logical URLs given as paths; default: the directory file's `logicalOrigin`. */
  logicalOrigin?: string;
  /** Insert the page-script tag into HTML pages (default false). */
  inject?: boolean;
  scriptPath?: string;
  workerPath?: string;
  clientBundleDir?: string;
  maxBindingsHeaderBytes?: number;
  /**
   * Directory version (`d`) of every binding written. Default: the build time in seconds, so
   * that each build's bindings replace those a browser kept from an earlier build (a worker
   * never lets an older version overwrite a newer one: docs/protocol.md, "Versions").
   */
  directoryVersion?: number;
}

export interface StaticBuildReport {
  files: number;
  pages: number;
  stylesheets: number;
  /** Pages and stylesheets that got a bindings header. */
  bound: number;
  /** Distinct bindings in the static bindings file, and its lines. */
  bindings: number;
  bindingLines: number;
  /**
   * Pages (their paths) with no replica on another host: while the own origin is down,
   * visitors cannot open them, whatever mirror is up (docs/static-hosting.md, "What to replicate").
   */
  pagesWithoutReplica: string[];
}

export async function buildStaticSite(options: StaticBuildOptions): Promise<StaticBuildReport> {
  const inDir = resolve(options.inDir);
  const outDir = resolve(options.outDir);
  if (outDir === inDir || outDir.startsWith(inDir + sep)) throw new WEBPP_ERR_BAD_OPTIONS(`--out ${outDir} must not be inside the input folder ${inDir}`);
  if (inDir.startsWith(outDir + sep)) throw new WEBPP_ERR_BAD_OPTIONS(`the input folder ${inDir} must not be inside --out ${outDir}`);
  const scriptPath = options.scriptPath ?? `/${PAGE_SCRIPT_FILE}`;
  const workerPath = options.workerPath ?? `/${WORKER_SCRIPT_FILE}`;
  const maxBytes = options.maxBindingsHeaderBytes ?? DEFAULT_MAX_HEADER_BYTES;
  const directoryVersion = options.directoryVersion ?? Math.floor(Date.now() / 1000);
  if (!Number.isSafeInteger(directoryVersion) || directoryVersion < 0) throw new WEBPP_ERR_BAD_OPTIONS(`directoryVersion must be a non-negative integer (got ${directoryVersion})`);
  if ((await stat(inDir).catch(() => undefined))?.isDirectory() !== true) throw new WEBPP_ERR_BAD_OPTIONS(`the input folder ${inDir} does not exist or is not a folder`);
  const directory = await loadDirectory(options.directoryFile, options.logicalOrigin, { scriptPath, workerPath });
  const logicalOrigin = directory.logicalOrigin;
  const settings: PreprocessSettings = {
    directory: directory.directory,
    maxBindingsHeaderBytes: maxBytes,
    injectScriptPath: options.inject === true ? scriptPath : undefined,
  };

  const rules = siteWideRules(workerPath);
  const learned: Binding[][] = [];
  const report: StaticBuildReport = { files: 0, pages: 0, stylesheets: 0, bound: 0, bindings: 0, bindingLines: 0, pagesWithoutReplica: [] };
  for (const file of await listFiles(inDir)) {
    const urlPath = `/${relative(inDir, file).split(sep).map(encodeURIComponent).join('/')}`;
    const target = join(outDir, relative(inDir, file));
    await mkdir(dirname(target), { recursive: true });
    report.files += 1;
    const kind = kindOf(urlPath);
    if (kind === undefined) {
      await copyFile(file, target);
      continue;
    }
    if (kind === 'html') {
      report.pages += 1;
      const replicas = settings.directory.lookup(`${logicalOrigin}${urlPath}`)?.physicalUrls ?? [];
      if (!replicas.some((url) => new URL(url).origin !== logicalOrigin)) report.pagesWithoutReplica.push(urlPath);
    } else report.stylesheets += 1;
    const body = await readFile(file);
    // A folder's index.html is also served at the folder's own URL: both get their header.
    const urls = urlPath.endsWith('/index.html') ? [urlPath, urlPath.slice(0, -'index.html'.length)] : [urlPath];
    let written: Buffer = body;
    for (const path of urls) {
      const pageUrl = `${logicalOrigin}${path}`;
      const result = preprocessBody(kind, body, kind === 'html' ? 'text/html; charset=utf-8' : 'text/css; charset=utf-8', pageUrl, settings.directory.lookup(pageUrl), settings);
      if (result.body !== undefined) written = result.body;
      const bindings = result.bindings ?? [];
      if (bindings.length === 0) continue;
      // Encoded again with the build's version (the run-time directory's version starts afresh each build).
      addBindingsRule(rules, path, encodeBindings({ directoryVersion, bindings }, { maxBytes }).value);
      learned.push(bindings);
    }
    if (rules.get(urls[0] as string)?.length) report.bound += 1;
    await writeFile(target, written);
  }

  await copyClientScripts(options.clientBundleDir, outDir, scriptPath, workerPath);
  const bindings = uniqueBindings(learned);
  const lines = encodeBindingLines(bindings, directoryVersion, maxBytes);
  report.bindings = bindings.length;
  report.bindingLines = lines.length;
  await writeFile(join(outDir, HEADERS_FILE), headersFileText(rules));
  const bindingsFile = join(outDir, ...STATIC_BINDINGS_PATH.split('/'));
  await mkdir(dirname(bindingsFile), { recursive: true });
  await writeFile(bindingsFile, staticBindingsText(lines));
  await writeFile(join(outDir, NO_JEKYLL_FILE), '');
  return report;
}

function kindOf(urlPath: string): PreprocessKind | undefined {
  const lower = urlPath.toLowerCase();
  if (lower.endsWith('.html') || lower.endsWith('.htm')) return 'html';
  if (lower.endsWith('.css')) return 'css';
  return undefined;
}

/**
 * Every file below `root` (symbolic links to files included, as a host serves them), sorted;
 * webpp's own outputs found in the input are left out (they are written afresh).
 */
/**
 * The files to publish: not dotfiles (`.git/`, `.env`; `.well-known` is published), as
 * `webpp-origin` does not serve them (http/hidden-paths.ts), and not links that lead out of
 * the folder (a link to /etc/passwd would otherwise be deployed as a copy).
 */
async function listFiles(root: string): Promise<string[]> {
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  const own = new Set([HEADERS_FILE, NO_JEKYLL_FILE, join(...STATIC_BINDINGS_PATH.slice(1).split('/'))]);
  const realRoot = await realpath(root);
  const files: string[] = [];
  for (const entry of entries) {
    const file = join(entry.parentPath, entry.name);
    if (isHiddenPath(relative(root, file))) continue;
    const isFile = entry.isFile() || (entry.isSymbolicLink() && (await stat(file).catch(() => undefined))?.isFile() === true && isInside(realRoot, await realpath(file)));
    if (isFile && !own.has(relative(root, file))) files.push(file);
  }
  return files.sort();
}

function isInside(root: string, file: string): boolean {
  return file.startsWith(root + sep);
}

async function loadDirectory(
  path: string,
  explicitOrigin: string | undefined,
  paths: { scriptPath: string; workerPath: string },
): Promise<{ directory: ReplicationDirectory; logicalOrigin: string }> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new WEBPP_ERR_DIRECTORY_FILE(path, (error as Error).message);
  }
  const json = parseDirectoryJson(text, path);
  // The file's logicalOrigin, or --logical-origin; both must agree (as for the server, directory/logical-origin.ts).
  const { logicalOrigin: base } = await withDirectoryLogicalOrigin({ directoryFile: path, ...(explicitOrigin === undefined ? {} : { logicalOrigin: explicitOrigin }) });
  if (base === undefined) throw new WEBPP_ERR_DIRECTORY_FILE(path, 'no logicalOrigin: give it in the file or with --logical-origin');
  const pairs = directoryPairsFrom(json, base, path);
  for (const pair of pairs) {
    const reserved = reservedPairReason(pair, paths);
    if (reserved !== undefined) throw new WEBPP_ERR_DIRECTORY_FILE(path, `${reserved.url} is reserved: ${reserved.reason}`);
  }
  const directory = new ReplicationDirectory();
  directory.batch({ add: pairs }, 'seed');
  return { directory, logicalOrigin: new URL(base).origin };
}

async function copyClientScripts(bundleDir: string | undefined, outDir: string, scriptPath: string, workerPath: string): Promise<void> {
  const scripts = new ClientScripts(bundleDir);
  const addons = WORKER_ADDON_FILES.map((file) => [file, workerAddonPath(workerPath, file)] as const);
  for (const [file, path] of [[PAGE_SCRIPT_FILE, scriptPath], [WORKER_SCRIPT_FILE, workerPath], ...addons] as const) {
    const result = await scripts.read(file);
    if (!result.ok) throw new WEBPP_ERR_CLIENT_BUNDLE_MISSING(result.message);
    const target = join(outDir, ...path.split('/'));
    await mkdir(dirname(target), { recursive: true });
    await writeFile(target, result.body);
  }
}
