/**
 * The worker's request path as docs/service-worker.md shows it ("The request path"), read
 * from the code so that the docs cannot drift (scripts/docs-options.ts writes it, and
 * origin/test/options-docs.test.ts fails when it is out of date; sw/test/request-path.test.ts
 * checks the same reading against a running client):
 *  - the stages, each file with the stage it calls next and the plugin callbacks it calls
 *    (`lifecycle.notify('…')` / `lifecycle.with('…')`), in the order sw/src/plugins.ts
 *    declares them, which is the order they run;
 *  - the lifecycle plugins, in the order sw/src/assemble.ts lists them (one per line), with
 *    the callbacks each has and the condition it is present under.
 * Plain text reading of sources, no worker code is run, so that a Node script can use it.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const SW_SRC = fileURLToPath(new URL('../sw/src/', import.meta.url));

const source = (file: string): string => readFileSync(`${SW_SRC}${file}`, 'utf8');

/** The stages of a bound request, in order, with the file that holds each. */
export const STAGES = [
  { stage: 'fetch handler', file: 'replica-client.ts' },
  { stage: 'route', file: 'route.ts' },
  { stage: 'plan', file: 'plan.ts' },
  { stage: 'attempt', file: 'attempt.ts' },
  { stage: 'serve', file: 'serve.ts' },
  { stage: 'learn', file: 'learn.ts' },
] as const;

/** The callbacks of WorkerPlugin (sw/src/plugins.ts), in the order the interface declares them. */
export function pluginCallbacks(): string[] {
  const text = source('plugins.ts');
  const body = text.slice(text.indexOf('export interface WorkerPlugin {'), text.indexOf('\n}', text.indexOf('export interface WorkerPlugin {')));
  return [...body.matchAll(/^ {2}(\w+)\?\(/gm)].map((match) => match[1] as string);
}

interface StageRow {
  stage: string;
  file: string;
  /** Stage files this one imports and calls. */
  calls: string[];
  /** Plugin callbacks it calls, in the order WorkerPlugin declares them (the order they run). */
  callbacks: string[];
}

export function stageRows(): StageRow[] {
  const order: string[] = STAGES.map((stage) => stage.file);
  return STAGES.map(({ stage, file }) => {
    const text = source(file);
    const imported = new Set([...text.matchAll(/^import \{[^}]*\} from '\.\/([\w-]+)\.js';$/gm)].map((match) => `${match[1]}.ts`));
    const calls = order.filter((other) => imported.has(other));
    const called = new Set([...text.matchAll(/lifecycle\.(?:notify|with)\('(\w+)'/g)].map((match) => match[1] as string));
    const callbacks = pluginCallbacks().filter((callback) => called.has(callback));
    return { stage, file, calls, callbacks };
  });
}

interface PluginRow {
  /** The factory (or class) that makes it, and its file. */
  factory: string;
  file: string;
  callbacks: string[];
  /** When it is present: the condition in assemble.ts; undefined: always. */
  when: string | undefined;
}

/**
 * The body of `function name(…) {…}` (or of the `plugin()` method of class `name`), up to its
 * closing brace at the start of a line; in `inFile`, else in the module assemble.ts imports it from.
 */
function definition(name: string, inFile?: string): { file: string; body: string } {
  const imports = [...source('assemble.ts').matchAll(/^import \{([^}]*)\} from '\.\/([\w-]+)\.js';$/gm)].map(([, names, moduleName]) => ({ names: names as string, file: `${moduleName}.ts` }));
  for (const { names, file } of inFile === undefined ? imports : [{ names: name, file: inFile }]) {
    if (!names.split(',').some((imported) => imported.trim() === name)) continue;
    const text = source(file);
    const start = text.search(new RegExp(`^(?:export )?(?:function ${name}\\(|class ${name} )`, 'm'));
    if (start < 0) break;
    const isClass = /^(?:export )?class /.test(text.slice(start));
    const from = isClass ? text.indexOf('  plugin(): WorkerPlugin {', start) : start;
    const end = text.indexOf(isClass ? '\n  }\n' : '\n}\n', from);
    if (from < 0 || end < 0) break;
    return { file, body: text.slice(from, end) };
  }
  throw new Error(`request path: no definition of ${name} found from sw/src/assemble.ts`);
}

export function pluginRows(): PluginRow[] {
  const text = source('assemble.ts');
  const list = text.slice(text.indexOf('const plugins: '), text.indexOf('\n  ];', text.indexOf('const plugins: ')));
  const callbacks = pluginCallbacks();
  const rows: PluginRow[] = [];
  for (const line of list.split('\n').slice(1)) {
    // `factoryPlugin(…),` or `condition && new Class(…).plugin(),`; an add-on's own: `stage.plugin ?? false, // factoryPlugin (file.ts)`.
    const made = /^ {4}(?:(.+?) && )?(?:new (\w+)\(.*\)\.plugin\(\)|(\w+Plugin)\(.*\)),$/.exec(line);
    const addOn = /^ {4}(.+?) \?\? false, \/\/ (\w+Plugin) \(([\w-]+\.ts)\)$/.exec(line);
    if (!made && !addOn) {
      if (line.trim() !== '' && !line.trim().startsWith('//')) throw new Error(`request path: cannot read the plugin line "${line.trim()}" of sw/src/assemble.ts`);
      continue;
    }
    const factory = (made ? (made[2] ?? made[3]) : addOn![2]) as string;
    const { file, body } = definition(factory, addOn?.[3]);
    const has = callbacks.filter((callback) => new RegExp(`^\\s+(?:async )?${callback}(?:\\(|: )`, 'm').test(body));
    if (has.length === 0) throw new Error(`request path: ${factory} (${file}) has no plugin callback`);
    rows.push({ factory: made?.[2] === undefined ? factory : `${factory}.plugin()`, file, callbacks: has, when: made ? made[1] && `\`${made[1]}\`` : 'its add-on is on' });
  }
  return rows;
}

export function requestPathMarkdown(): string {
  const stages = stageRows().map(
    ({ stage, file, calls, callbacks }, index) =>
      `| ${index + 1} | ${stage} | \`${file}\` | ${calls.map((call) => `\`${call}\``).join(', ') || '—'} | ${callbacks.map((callback) => `\`${callback}\``).join(' → ') || '—'} |`,
  );
  const plugins = pluginRows().map(
    ({ factory, file, callbacks, when }, index) =>
      `| ${index + 1} | \`${factory}\` | \`${file}\` | ${callbacks.map((callback) => `\`${callback}\``).join(', ')} | ${when ?? 'always'} |`,
  );
  return [
    '| # | stage | file | calls | plugin callbacks it calls, in order |',
    '| --- | --- | --- | --- | --- |',
    ...stages,
    '',
    '| # | plugin | file | callbacks | present when |',
    '| --- | --- | --- | --- | --- |',
    ...plugins,
  ].join('\n');
}
