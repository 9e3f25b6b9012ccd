/**
 * The flags of webpp-origin, derived from the option schemas: every option with a `cli`
 * annotation becomes a flag (its name in kebab-case unless it says otherwise), typed by
 * its schema. Booleans that default to true become `--no-<flag>`; arrays may be repeated
 * or comma-separated; batch options become `--batch-<option>`.
 */
import type { TObject } from 'typebox';
import { CLI_GROUPS, kebabCase, type CliAnnotation } from './annotations.js';
import { defaultPlain, plainText, type AnnotatedSchema } from './describe.js';
import { pluginOptionsSchema } from './plugin-schema.js';
import { cliOnlySchema, serverOptionsSchema } from './server-schema.js';
import { batchOptionsSchema } from '../batch/batch-options.js';

/** Which options object a flag fills: startReplicaServer's (plugin and server options) or the command's own. */
type FlagTarget = 'server' | 'cli';

export interface FlagSpec {
  /** Without dashes: "max-replica-bytes", "no-inject". */
  flag: string;
  target: FlagTarget;
  /** Where the value goes: ["maxReplicaBytes"], ["batch", "maxParts"]. */
  path: string[];
  kind: 'boolean' | 'integer' | 'number' | 'string' | 'list';
  /** The value a boolean flag sets when given (false for --no-… flags). */
  setTo: boolean;
  schema: AnnotatedSchema;
  cli: CliAnnotation;
}

interface Source {
  schema: TObject;
  target: FlagTarget;
  path: string[];
  flagPrefix: string;
}

const SOURCES: Source[] = [
  { schema: serverOptionsSchema, target: 'server', path: [], flagPrefix: '' },
  { schema: pluginOptionsSchema, target: 'server', path: [], flagPrefix: '' },
  { schema: batchOptionsSchema, target: 'server', path: ['batch'], flagPrefix: 'batch-' },
  { schema: cliOnlySchema, target: 'cli', path: [], flagPrefix: '' },
];

function kindOf(schema: AnnotatedSchema): FlagSpec['kind'] {
  if (schema.type === 'array') return 'list';
  if (schema.type === 'integer' || schema.type === 'number' || schema.type === 'boolean') return schema.type;
  // `batch`: true, false or an object; on the command line a switch (its details are --batch-… flags).
  if (schema.anyOf?.some((branch) => (branch as AnnotatedSchema).type === 'boolean')) return 'boolean';
  return 'string';
}

function specsOf(source: Source): FlagSpec[] {
  return Object.entries(source.schema.properties).flatMap(([name, property]) => {
    const schema = property as AnnotatedSchema;
    if (schema.cli === undefined) return [];
    const kind = kindOf(schema);
    const base = `${source.flagPrefix}${schema.cli.flag ?? kebabCase(name)}`;
    const setTo = !(kind === 'boolean' && schema.default === true);
    return [{ flag: setTo ? base : `no-${base}`, target: source.target, path: [...source.path, name], kind, setTo, schema, cli: schema.cli }];
  });
}

/** Every flag, in the order of the schemas. */
export const FLAGS: readonly FlagSpec[] = SOURCES.flatMap(specsOf);

/** The `options` argument of node:util parseArgs. */
export function parseArgsOptions(): Record<string, { type: 'string' | 'boolean'; multiple?: boolean; short?: string }> {
  const options: Record<string, { type: 'string' | 'boolean'; multiple?: boolean; short?: string }> = {
    help: { type: 'boolean', short: 'h' },
  };
  for (const spec of FLAGS) {
    options[spec.flag] = spec.kind === 'boolean' ? { type: 'boolean' } : spec.kind === 'list' ? { type: 'string', multiple: true } : { type: 'string' };
  }
  return options;
}

const HELP_COLUMN = 32;
const HELP_WIDTH = 96;

function wrap(left: string, text: string): string {
  const lines: string[] = [];
  let line = left.length >= HELP_COLUMN - 1 ? `${left}\n${' '.repeat(HELP_COLUMN)}` : left.padEnd(HELP_COLUMN);
  let width = line.length - line.lastIndexOf('\n') - 1;
  for (const word of text.split(/\s+/)) {
    if (width + word.length + 1 > HELP_WIDTH && width > HELP_COLUMN) {
      lines.push(line.trimEnd());
      line = ' '.repeat(HELP_COLUMN);
      width = HELP_COLUMN;
    }
    const piece = width > HELP_COLUMN ? ` ${word}` : word;
    line += piece;
    width += piece.length;
  }
  lines.push(line.trimEnd());
  return lines.join('\n');
}

/** One flag as a --help entry. */
function helpEntry(spec: FlagSpec): string {
  const arg = spec.kind === 'boolean' ? '' : ` <${spec.cli.arg ?? (spec.kind === 'integer' || spec.kind === 'number' ? 'n' : 'value')}>`;
  const name = spec.path[spec.path.length - 1] ?? '';
  const left = `  ${spec.cli.positional === true ? `[${name}], ` : ''}--${spec.flag}${arg}`;
  const parts = [plainText(spec.schema.description ?? '')];
  if (spec.kind === 'list') parts.push('Repeat the flag, or give a comma-separated list.');
  const fallback = spec.cli.defaultText ?? defaultPlain(name, spec.cli.default ?? spec.schema.defaultText ?? spec.schema.default);
  if (spec.kind === 'boolean') {
    if (!spec.setTo) parts.push('On by default; this flag turns it off.');
  } else if (fallback !== undefined) {
    parts.push(`Default: ${plainText(fallback)}${spec.cli.env === undefined ? '' : `, or $${spec.cli.env}`}.`);
  }
  if (spec.cli.env !== undefined && (fallback === undefined || spec.kind === 'boolean')) parts.push(`Also $${spec.cli.env}.`);
  if (spec.schema.enum !== undefined) parts.push(`One of: ${spec.schema.enum.join(', ')}.`);
  return wrap(left, parts.join(' '));
}

/**
 * The flags an operator needs first, in this order (issue 23: the credentials came after
 * 60 lines of replication tuning). Everything else follows in one section per feature.
 */
const ESSENTIALS = ['root', 'proxy-upstream', 'port', 'public-host', 'public-url', 'logical-origin', 'directory', 'data-dir', 'peer'];
const CREDENTIALS_HEADING = 'Credentials (prefer the environment variables: arguments are visible in ps)';

/** Feature sections after the essentials and credentials; a flag in none stays in its schema group. */
const FEATURES: { heading: string; has: (flag: string) => boolean }[] = [
  { heading: 'HTTPS and HTTP/2', has: (flag) => flag.startsWith('tls-') },
  { heading: 'Peers and directory sync', has: (flag) => ['host', 'alias-url', 'sync-interval-ms', 'peer-timeout-ms', 'max-clock-skew-ms', 'peer-ping-interval-ms', 'peer-missed-pings-for-down'].includes(flag) },
  { heading: 'Page script and worker', has: (flag) => ['no-inject', 'no-serve-client-scripts', 'script-path', 'worker-path', 'client-bundle-dir', 'cors', 'kill-switch', 'content-digests'].includes(flag) },
  { heading: 'Automatic replication (off by default)', has: (flag) => /^(no-)?(auto-replicate|replication-)/.test(flag) },
  { heading: 'Memory cache (off by default)', has: (flag) => /^(no-)?memory-cache-/.test(flag) },
  { heading: 'Batch transmission (off by default)', has: (flag) => flag === 'batch' || flag.startsWith('batch-') },
  { heading: 'Service time and peer load', has: (flag) => /^(no-push-service-time|service-time-|peer-load-)/.test(flag) },
  { heading: 'Client reports (off by default)', has: (flag) => /^client-(aggregate|report)/.test(flag) },
];

function sectionOf(spec: FlagSpec): string {
  if (ESSENTIALS.includes(spec.flag)) return 'Essentials';
  if (spec.cli.group === 'Credentials') return CREDENTIALS_HEADING;
  return FEATURES.find((feature) => feature.has(spec.flag))?.heading ?? spec.cli.group;
}

/** The flags of --help, in sections: essentials, credentials, then one per feature, then the schema groups left. */
export function helpSections(): string {
  const essentials = ESSENTIALS.map((flag) => FLAGS.find((spec) => spec.flag === flag)).filter((spec): spec is FlagSpec => spec !== undefined);
  const headings = ['Essentials', CREDENTIALS_HEADING, ...FEATURES.map((feature) => feature.heading), ...CLI_GROUPS];
  return [...new Set(headings)]
    .map((heading) => {
      const specs = heading === 'Essentials' ? essentials : FLAGS.filter((spec) => sectionOf(spec) === heading);
      return specs.length === 0 ? '' : `${heading}\n${specs.map(helpEntry).join('\n')}\n`;
    })
    .filter((section) => section !== '')
    .join('\n');
}
