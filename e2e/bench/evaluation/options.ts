/**
 * The evaluation bench's options, from the command line and the environment, defined once:
 *
 *   npm run bench evaluation -- --runs 3
 *
 *   --runs N / WEBPP_EVAL_RUNS          full runs; figures are the median over runs, with the range (default 1)
 *   --quick                             one run, each scenario compressed to 15 s (to try the harness; shared
 *                                       with evaluation-generated.bench.ts, which `npm run bench evaluation` runs next)
 *   WEBPP_EVAL_SCENARIO_SECONDS         each scenario is compressed in time to at most this long (default 60)
 *   WEBPP_EVAL_TIME_SCALE               a fixed time scale for every scenario instead (0 < scale ≤ 1)
 *   WEBPP_EVAL_CLIENTS                  clients per policy (default 1; the paper had 3)
 *   WEBPP_EVAL_SCENARIOS                comma-separated scenario names (default: every shipped one)
 *   WEBPP_EVAL_POLICIES                 comma-separated policy names (default: all; both optimal baselines always run)
 *   WEBPP_EVAL_OUT                      output folder (default docs/benchmarks)
 *   WEBPP_EVAL_RAW                      a folder: also write every request's record there (raw-<scenario>-run<n>.json)
 */
import { parseArgs } from 'node:util';
import { BUILTIN_SCENARIOS } from '@webpp/netem';

export interface EvaluationOptions {
  runs: number;
  scenarioSeconds: number;
  /** A fixed time scale, or undefined: each scenario is fitted to scenarioSeconds. */
  timeScale: number | undefined;
  clients: number;
  scenarios: string[];
  /** Undefined: every policy. */
  policies: string[] | undefined;
  outDir: string;
  rawDir: string | undefined;
  /** What to print as the command that produced the figures. */
  command: string;
}

const list = (value: string | undefined): string[] | undefined => value?.split(',').map((name) => name.trim()).filter(Boolean);

function integerIn(name: string, value: string, min: number, max: number): number {
  const number = Number(value);
  if (!(Number.isInteger(number) && number >= min && number <= max)) throw new RangeError(`${name} must be an integer in [${min}, ${max}] (got ${value})`);
  return number;
}

export function evaluationOptions(argv: readonly string[], env: NodeJS.ProcessEnv, resolveOut: (path: string) => string): EvaluationOptions {
  const { values } = parseArgs({ args: [...argv], options: { runs: { type: 'string' }, quick: { type: 'boolean' } }, strict: true });
  const runs = values.quick ? 1 : integerIn('--runs', values.runs ?? env['WEBPP_EVAL_RUNS'] ?? '1', 1, 5);
  const scenarioSeconds = Number(env['WEBPP_EVAL_SCENARIO_SECONDS'] ?? (values.quick ? 15 : 60));
  if (!(scenarioSeconds >= 5 && scenarioSeconds <= 600)) throw new RangeError(`WEBPP_EVAL_SCENARIO_SECONDS must be in [5, 600] (got ${env['WEBPP_EVAL_SCENARIO_SECONDS']})`);
  const fixedScale = env['WEBPP_EVAL_TIME_SCALE'];
  const timeScale = fixedScale === undefined ? undefined : Number(fixedScale);
  if (timeScale !== undefined && !(timeScale > 0 && timeScale <= 1)) throw new RangeError(`WEBPP_EVAL_TIME_SCALE must be in (0, 1] (got ${fixedScale})`);
  const clients = integerIn('WEBPP_EVAL_CLIENTS', env['WEBPP_EVAL_CLIENTS'] ?? '1', 1, 10);
  const envNames = ['WEBPP_EVAL_SCENARIO_SECONDS', 'WEBPP_EVAL_TIME_SCALE', 'WEBPP_EVAL_CLIENTS', 'WEBPP_EVAL_SCENARIOS', 'WEBPP_EVAL_POLICIES'].filter((name) => env[name] !== undefined);
  return {
    runs,
    scenarioSeconds,
    timeScale,
    clients,
    scenarios: list(env['WEBPP_EVAL_SCENARIOS']) ?? [...BUILTIN_SCENARIOS],
    policies: list(env['WEBPP_EVAL_POLICIES']),
    outDir: resolveOut(env['WEBPP_EVAL_OUT'] ?? 'docs/benchmarks'),
    rawDir: env['WEBPP_EVAL_RAW'] === undefined ? undefined : resolveOut(env['WEBPP_EVAL_RAW']),
    command: `${envNames.map((name) => `${name}=${env[name]} `).join('')}npm run bench evaluation${values.quick ? ' -- --quick' : runs > 1 ? ` -- --runs ${runs}` : ''}`,
  };
}

/** The time scale of a scenario of `durationMs`: the fixed one, or what fits it into scenarioSeconds. */
export function timeScaleFor(options: Pick<EvaluationOptions, 'timeScale' | 'scenarioSeconds'>, durationMs: number): number {
  return options.timeScale ?? Math.min(1, (options.scenarioSeconds * 1000) / durationMs);
}
