/** A plugin's slice of the resolved options: the options named by `keys`, and no others. */
export function pick<O extends object, K extends keyof O>(options: O, keys: readonly K[]): Pick<O, K> {
  return Object.fromEntries(keys.map((key) => [key, options[key]])) as Pick<O, K>;
}
