/**
 * `webpp-origin build`: the static hosting mode's command line (static-build.ts,
 * docs/static-hosting.md).
 */
import { parseArgs } from 'node:util';
import { STATIC_BINDINGS_PATH } from '@webpp/core';
import { buildStaticSite, type StaticBuildOptions } from './static-build.js';

const BUILD_HELP = `Usage: webpp-origin build <in-dir> --out <out-dir> --directory <directory.json> [options]

Pre-processes a folder for a static host (Netlify, Cloudflare Pages, GitHub Pages, S3, a CDN),
as webpp-origin does at run time: every HTML page and stylesheet gets the bindings of the
replicas it references. Writes to <out-dir>: a copy of the site, webpp.js and webpp-sw.js,
_headers (Netlify / Cloudflare Pages: bindings, CORS and Timing-Allow-Origin), the static
bindings file /.well-known/webpp/bindings (for hosts that set no headers) and .nojekyll.

  --out <dir>                   Output folder (created; must not be inside <in-dir>).
  --directory <file>            Directory file (JSON, format in docs/origin.md).
  --logical-origin <url>        Origin of logical URLs written as paths (default: the
                                directory file's logicalOrigin).
  --inject                      Insert <script src="/webpp.js" async></script> into HTML pages.
  --client-bundle-dir <dir>     Folder with webpp.js and webpp-sw.js (default: @webpp/sw bundle).
  --max-header-bytes <n>        Byte budget of one bindings header value (default 8192).
  --directory-version <n>       Directory version of the bindings (default: the build time in
                                seconds, so that a new build's bindings replace older ones).
  -h, --help                    Show this help.
`;

class BuildUsageError extends Error {}

/** The bindings encoder's smallest budget (core's EncodeOptions.maxBytes). */
const MIN_HEADER_BYTES = 64;

function isHttpOrigin(text: string): boolean {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return false;
  }
  return (url.protocol === 'http:' || url.protocol === 'https:') && url.pathname === '/' && url.search === '' && url.hash === '' && url.username === '';
}

function parseBuildCli(argv: string[]): { help: true } | { help: false; options: StaticBuildOptions } {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      out: { type: 'string' },
      directory: { type: 'string' },
      'logical-origin': { type: 'string' },
      inject: { type: 'boolean' },
      'client-bundle-dir': { type: 'string' },
      'max-header-bytes': { type: 'string' },
      'directory-version': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help === true) return { help: true };
  if (positionals.length !== 1) throw new BuildUsageError('give exactly one input folder');
  if (values.out === undefined) throw new BuildUsageError('give --out <dir>');
  if (values.directory === undefined) throw new BuildUsageError('give --directory <directory.json>');
  const maxHeader = values['max-header-bytes'];
  if (maxHeader !== undefined && !(/^\d+$/.test(maxHeader) && Number(maxHeader) >= MIN_HEADER_BYTES)) {
    throw new BuildUsageError(`--max-header-bytes must be an integer >= ${MIN_HEADER_BYTES} (got ${JSON.stringify(maxHeader)})`);
  }
  const logicalOrigin = values['logical-origin'];
  if (logicalOrigin !== undefined && !isHttpOrigin(logicalOrigin)) {
    throw new BuildUsageError(`--logical-origin must be an http(s) origin without path, query or fragment, e.g. https://example.org (got ${JSON.stringify(logicalOrigin)})`);
  }
  const options: StaticBuildOptions = {
    inDir: positionals[0] as string,
    outDir: values.out,
    directoryFile: values.directory,
    inject: values.inject === true,
  };
  if (logicalOrigin !== undefined) options.logicalOrigin = logicalOrigin;
  if (values['client-bundle-dir'] !== undefined) options.clientBundleDir = values['client-bundle-dir'];
  if (maxHeader !== undefined) options.maxBindingsHeaderBytes = Number(maxHeader);
  const version = values['directory-version'];
  if (version !== undefined && !/^\d{1,15}$/.test(version)) throw new BuildUsageError(`--directory-version must be a non-negative integer (got ${JSON.stringify(version)})`);
  if (version !== undefined) options.directoryVersion = Number(version);
  return { help: false, options };
}

/** Runs the command; sets process.exitCode (2 usage, 1 failure). */
export async function runBuildCommand(argv: string[]): Promise<void> {
  let parsed;
  try {
    parsed = parseBuildCli(argv);
  } catch (error) {
    process.stderr.write(`webpp-origin build: ${(error as Error).message}\nRun "webpp-origin build --help" for usage.\n`);
    process.exitCode = 2;
    return;
  }
  if (parsed.help) {
    process.stdout.write(BUILD_HELP);
    return;
  }
  try {
    const report = await buildStaticSite(parsed.options);
    process.stdout.write(
      `webpp-origin build: ${report.files} files (${report.pages} pages, ${report.stylesheets} stylesheets, ${report.bound} with bindings) -> ${parsed.options.outDir}\n` +
        `  ${report.bindings} bindings in ${report.bindingLines} lines of ${STATIC_BINDINGS_PATH}; _headers written\n`,
    );
    const orphans = report.pagesWithoutReplica;
    if (orphans.length > 0) {
      process.stderr.write(
        `webpp-origin build: warning: ${orphans.length} of ${report.pages} pages have no replica on another host (${orphans.slice(0, 3).join(', ')}${orphans.length > 3 ? ', …' : ''}): ` +
          `while the site's own origin is down, visitors cannot open them, even with a mirror up. ` +
          `Replicate the pages too, e.g. { "logical": "/*", "servers": [...] } in the directory file (docs/static-hosting.md, "What to replicate").\n`,
      );
    }
  } catch (error) {
    const code = (error as { code?: string }).code;
    process.stderr.write(`webpp-origin build: ${code !== undefined ? `${code}: ` : ''}${(error as Error).message}\n`);
    // Options the command line should not have allowed (--out inside the input folder, a
    // missing input folder) are usage errors, as documented: 2. A failed build is 1.
    process.exitCode = code === 'WEBPP_ERR_BAD_OPTIONS' ? 2 : 1;
  }
}
