import type { EngineHooks } from './engine-io.js';

type HookName = keyof EngineHooks;

/** One EngineHooks object that calls each of `hooks` in order (several plugins on one engine). */
export function combineHooks(...hooks: Array<EngineHooks | undefined>): EngineHooks {
  const present = hooks.filter((hook): hook is EngineHooks => hook !== undefined);
  const names = new Set(present.flatMap((hook) => Object.keys(hook) as HookName[]));
  const combined: Record<string, (...args: unknown[]) => void> = {};
  for (const name of names) {
    // Called on their own object, so hooks written as class methods keep their `this`.
    const owners = present.filter((hook) => hook[name] !== undefined);
    combined[name] = (...args) => {
      for (const hook of owners) (hook[name] as (...callArgs: unknown[]) => void).apply(hook, args);
    };
  }
  return combined;
}
