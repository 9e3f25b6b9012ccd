/**
 * Command-line flags to options objects, typed and checked by the same schemas as the API:
 * a bad value is reported under the flag's name ("--max-replica-bytes must be >= 1").
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { TObject } from 'typebox';
import { FLAGS, parseArgsOptions, type FlagSpec } from './cli-flags.js';
import { compileOptions, type PathNamer } from './compile-options.js';
import { pluginOptionsSchema } from './plugin-schema.js';
import { cliOnlySchema, serverOptionsSchema } from './server-schema.js';
import { resolveOptions, type WebppOriginOptions } from '../options.js';
import { INTERNAL_CONSTANTS, removedFlag } from './internals.js';

/** A mistake on the command line (exit status 2). */
export class UsageError extends Error {}

type Values = Record<string, unknown>;

export interface ParsedFlags {
  help: boolean;
  positionals: string[];
  /** Options for startReplicaServer (plugin and server options), only those given or with a command-line default. */
  server: Values;
  /** The command's own options (TLS files, secret files, log level). */
  cli: Values;
  /** Flags given explicitly (not from the environment or a default). */
  given: Set<string>;
}

/** `label`: how the user gave the value (`--port`, or `$PORT` when it came from the environment). */
function convert(spec: FlagSpec, raw: string, label: string): unknown {
  if (spec.kind === 'integer') {
    if (!/^-?\d+$/.test(raw.trim())) {
      throw new UsageError(`${label} must be a${(spec.schema as { minimum?: number }).minimum === undefined ? 'n' : ' non-negative'} integer (got ${JSON.stringify(raw)})`);
    }
    return Number(raw);
  }
  if (spec.kind === 'number') {
    const value = Number(raw);
    if (raw.trim() === '' || !Number.isFinite(value)) throw new UsageError(`${label} must be a number (got ${JSON.stringify(raw)})`);
    return value;
  }
  return raw;
}

function setPath(target: Values, path: string[], value: unknown): void {
  const [head, ...rest] = path as [string, ...string[]];
  if (rest.length === 0) {
    target[head] = value;
    return;
  }
  const child = typeof target[head] === 'object' && target[head] !== null ? (target[head] as Values) : {};
  target[head] = child;
  setPath(child, rest, value);
}

/**
 * Names a JSON path by how the user gave it, for error messages: ["peers", "1"] →
 * "--peer[1]"; a value from the environment or a secret file by its variable or file flag
 * (`labels`: flag → "$WEBPP_ADMIN_TOKEN", "--admin-token-file").
 */
function flagNamer(labels: ReadonlyMap<string, string>): PathNamer {
  return (path) => {
    for (let length = path.length; length > 0; length--) {
      const spec = FLAGS.find((candidate) => candidate.path.join('.') === path.slice(0, length).join('.'));
      if (spec !== undefined) return `${labels.get(spec.flag) ?? `--${spec.flag}`}${path.slice(length).map((part) => `[${part}]`).join('')}`;
    }
    return `option ${path.join('.')}`;
  };
}

/** `--admin-token-file` and the like: the secret read from a file (trimmed); exclusive with the flag itself. */
const SECRET_FILES = [
  { flag: 'admin-token', fileKey: 'adminTokenFile', key: 'adminToken' },
  { flag: 'cluster-secret', fileKey: 'clusterSecretFile', key: 'clusterSecret' },
] as const;

function readSecretFiles(result: ParsedFlags, labels: Map<string, string>): void {
  for (const { flag, fileKey, key } of SECRET_FILES) {
    const file = result.cli[fileKey] as string | undefined;
    if (file === undefined) continue;
    if (result.given.has(flag)) throw new UsageError(`give --${flag} or --${flag}-file, not both`);
    try {
      result.server[key] = readFileSync(file, 'utf8').trim();
    } catch (error) {
      throw new UsageError(`cannot read --${flag}-file ${file}: ${(error as Error).message}`);
    }
    labels.set(flag, `--${flag}-file`);
  }
}

const serverValidator = compileOptions(serverOptionsSchema);
const cliValidator = compileOptions(cliOnlySchema);

function pick(values: Values, schema: TObject): Values {
  return Object.fromEntries(Object.entries(values).filter(([key]) => key in schema.properties));
}

/** Every problem of the options the flags gave, under the flags' names. */
function problemsOf(result: ParsedFlags, flagName: PathNamer): string[] {
  const problems: string[] = [];
  for (const [validator, values] of [[serverValidator, pick(result.server, serverOptionsSchema)], [cliValidator, result.cli]] as const) {
    const checked = validator.check(values, flagName);
    if (!checked.ok) problems.push(...checked.problems);
  }
  try {
    // The plugin's own checks (origins, peers need a secret, …); the public URL is only known once bound.
    const plugin = pick(result.server, pluginOptionsSchema) as WebppOriginOptions;
    resolveOptions({ ...plugin, publicUrl: plugin.publicUrl ?? 'http://127.0.0.1' }, flagName);
  } catch (error) {
    problems.push((error as Error).message.replace(/^Invalid @webpp\/origin options: /, ''));
  }
  return problems;
}

/** Parses argv (without node and script); throws UsageError naming the flag of any bad value. */
export function parseFlags(argv: string[], env: NodeJS.ProcessEnv): ParsedFlags {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, allowPositionals: true, strict: true, options: parseArgsOptions() });
  } catch (error) {
    // A flag of an option that became a constant (options/internals.ts): say so.
    const flag = /'--([a-z-]+)'/.exec((error as Error).message)?.[1];
    const removed = Object.keys(INTERNAL_CONSTANTS).find((option) => removedFlag(option) === flag);
    throw new UsageError(removed === undefined ? (error as Error).message : `--${flag}: removed (issue 24), now a constant; delete it (docs/origin.md, "Removed options")`);
  }
  const values = parsed.values as Record<string, string | string[] | boolean | undefined>;
  const result: ParsedFlags = { help: values.help === true, positionals: parsed.positionals, server: {}, cli: {}, given: new Set() };
  const labels = new Map<string, string>();
  for (const spec of FLAGS) {
    const target = spec.target === 'server' ? result.server : result.cli;
    const raw = values[spec.flag];
    if (raw !== undefined) result.given.add(spec.flag);
    if (spec.kind === 'boolean') {
      if (raw === true) setPath(target, spec.path, spec.setTo);
      else if (spec.path.length === 1) setPath(target, spec.path, !spec.setTo);
      continue;
    }
    if (spec.kind === 'list') {
      const items = ((raw as string[] | undefined) ?? []).flatMap((item) => item.split(',')).map((item) => item.trim()).filter((item) => item !== '');
      if (raw !== undefined) setPath(target, spec.path, items);
      continue;
    }
    const fromEnv = spec.cli.env === undefined ? undefined : env[spec.cli.env];
    const text = (raw as string | undefined) ?? (fromEnv === '' ? undefined : fromEnv);
    if (raw === undefined && text !== undefined) labels.set(spec.flag, `$${spec.cli.env ?? ''}`);
    if (text !== undefined) setPath(target, spec.path, convert(spec, text, labels.get(spec.flag) ?? `--${spec.flag}`));
    else if (spec.cli.default !== undefined) setPath(target, spec.path, spec.cli.default);
  }
  readSecretFiles(result, labels);
  const problems = problemsOf(result, flagNamer(labels));
  if (problems.length > 0) throw new UsageError(problems.join('; '));
  return result;
}
