/**
 * `webpp-origin check <page url>`: the command line of deployment-check.ts. Exit status 0
 * when every replica is usable, 1 when the page, its bindings or a replica is not, 2 for a
 * usage error.
 */
import { parseArgs } from 'node:util';
import { checkDeployment, type CheckReport } from './deployment-check.js';

const CHECK_HELP = `Usage: webpp-origin check <page url> [--json] [--timeout-ms <n>]

Checks a deployment as the browser's worker sees it: fetches the page and its bindings (the
webpp-bindings header, /.well-known/webpp/bindings or _headers), requests every replica of
the page's bound files as the worker would (CORS mode from the page's origin, redirects not
followed), and reports per replica what stops the worker using it: a missing
Access-Control-Allow-Origin or Timing-Allow-Origin, the status, a digest mismatch, a missing
file, a redirect to another host, a clock or cache header. Exit status 1 when a replica is
unusable.

  --json                        Print the report as JSON.
  --timeout-ms <n>              Time limit of each request (default 10000).
  -h, --help                    Show this help.
`;

function printReport(report: CheckReport): string {
  const lines = [`webpp-origin check ${report.pageUrl}`];
  lines.push(`  page      ${report.pageStatus ?? 'not reachable'}; bindings: ${report.bindingsFrom === undefined ? 'none' : `${report.bindingCount} from the ${report.bindingsFrom}`}`);
  for (const finding of report.siteFindings) lines.push(`  ${finding.severity === 'unusable' ? 'PROBLEM' : 'warning'}   ${finding.message}`);
  for (const replica of report.replicas) {
    lines.push(`  replica   ${replica.server}  ${replica.usable ? 'usable' : 'UNUSABLE'} (${replica.files.length} file${replica.files.length === 1 ? '' : 's'} checked)`);
    for (const file of replica.files) {
      for (const finding of file.findings) {
        lines.push(`            ${finding.severity === 'unusable' ? 'PROBLEM' : 'warning'} ${new URL(file.physicalUrl).pathname}: ${finding.message}`);
      }
    }
  }
  const unusable = report.replicas.filter((replica) => !replica.usable).length;
  lines.push(report.ok ? `ok: ${report.replicas.length} replica server(s) usable` : `not ok: ${unusable} of ${report.replicas.length} replica server(s) unusable${report.siteFindings.some((finding) => finding.severity === 'unusable') ? ', and the page or its bindings have problems' : ''}`);
  return `${lines.join('\n')}\n`;
}

/** Runs the command; sets process.exitCode (0 usable, 1 a problem, 2 usage). */
export async function runCheckCommand(argv: string[]): Promise<void> {
  let values;
  let positionals;
  try {
    ({ values, positionals } = parseArgs({ args: argv, allowPositionals: true, strict: true, options: { json: { type: 'boolean' }, 'timeout-ms': { type: 'string' }, help: { type: 'boolean', short: 'h' } } }));
    if (values.help === true) {
      process.stdout.write(CHECK_HELP);
      return;
    }
    if (positionals.length !== 1) throw new Error('give exactly one page URL, e.g. https://example.org/');
    const url = new URL(positionals[0] as string);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`the page URL must be http(s) (got ${url.href})`);
    if (values['timeout-ms'] !== undefined && !/^\d+$/.test(values['timeout-ms'])) throw new Error('--timeout-ms must be a positive integer');
  } catch (error) {
    process.stderr.write(`webpp-origin check: ${(error as Error).message}\nRun "webpp-origin check --help" for usage.\n`);
    process.exitCode = 2;
    return;
  }
  const timeout = values['timeout-ms'];
  const report = await checkDeployment({ pageUrl: positionals[0] as string, ...(timeout === undefined ? {} : { timeoutMs: Math.max(1, Number(timeout)) }) });
  process.stdout.write(values.json === true ? `${JSON.stringify(report, null, 2)}\n` : printReport(report));
  process.exitCode = report.ok ? 0 : 1;
}
