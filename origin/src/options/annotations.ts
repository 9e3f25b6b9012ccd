/**
 * The annotations an option's TypeBox schema carries besides its JSON Schema keywords, so
 * that one definition gives the type, the validation with defaults, the CLI flag, the
 * `--help` line and the docs table row. Ajv is told about these keywords (they validate
 * nothing), see compile-options.ts.
 */

/** Sections of `webpp-origin --help`, in the order they are printed. */
export const CLI_GROUPS = ['Content', 'Network', 'HTTPS and HTTP/2', 'Replication', 'Credentials', 'Behaviour', 'Batch transmission', 'Limits and tuning'] as const;
type CliGroup = (typeof CLI_GROUPS)[number];

/** How an option appears on the command line of `webpp-origin`. */
export interface CliAnnotation {
  group: CliGroup;
  /** Flag name without dashes. Default: the option name in kebab-case. */
  flag?: string;
  /** Placeholder of the value in --help, e.g. "url". Default: "n" for numbers, "value" else. */
  arg?: string;
  /** Environment variable read when the flag is absent. */
  env?: string;
  /** A different default on the command line than in the API (e.g. a persistent data folder). */
  default?: string | number | boolean;
  /** The default as written in --help when it is not a plain value. */
  defaultText?: string;
  /** Also accepted as the command's one positional argument (`webpp-origin ./site`). */
  positional?: boolean;
}

/** Keywords our option schemas may carry beside `default` and `description`. */
export interface OptionAnnotations {
  /** What an option does, in Markdown (docs table); as plain text in --help. */
  description: string;
  /** The default as words, when there is no JSON `default` (e.g. "`publicUrl`"). */
  defaultText?: string;
  /** What `pattern` asks for, in words, for error messages ("visible ASCII characters"). */
  patternText?: string;
  /** The command-line flag; absent = the option has none (functions, objects). */
  cli?: CliAnnotation;
}

/** The annotation keywords, registered with Ajv as annotations. */
export const ANNOTATION_KEYWORDS = ['defaultText', 'cli', 'patternText'] as const;

/** "maxReplicaBytes" → "max-replica-bytes". */
export function kebabCase(name: string): string {
  return name.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`);
}
