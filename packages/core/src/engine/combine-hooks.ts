import type { EngineHooks } from './engine-io.js';

type HookName = keyof EngineHooks;

/** One EngineHooks object that calls each of `hooks` in order (several plugins on one engine). */
export function combineHooks(...hooks: Array<EngineHooks | undefined>): EngineHooks {
  const present = hooks.filter((hook): hook is EngineHooks => hook !== undefined);
  const names = new Set(present.flatMap((hook) => Object.keys(hook) as HookName[]));
  const combined: Record<string, (...args: unknown[]) => void> = {};
  for (const name of names) {
    const callbacks = present.map((hook) => hook[name] as ((...args: unknown[]) => void) | undefined).filter((callback) => callback !== undefined);
    combined[name] = (...args) => {
      for (const callback of callbacks) callback(...args);
    };
  }
  return combined as EngineHooks;
}
