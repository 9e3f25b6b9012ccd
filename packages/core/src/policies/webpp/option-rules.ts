/**
 * The range checks of the webpp policy's options (options.ts, herd-options.ts,
 * budget-options.ts), each with the words its RangeError uses. Defined once and shared, so
 * that each option's rule is a name, not a copy of the check and its words (the worker's
 * bundle carries the table).
 */
export type OptionRule = readonly [check: (value: number) => boolean, words: string];

export const POSITIVE: OptionRule = [(v) => v > 0, '> 0'];
export const NON_NEGATIVE: OptionRule = [(v) => v >= 0, '>= 0'];
export const SHARE: OptionRule = [(v) => v >= 0 && v <= 1, 'in [0, 1]'];
export const OPEN_UNIT: OptionRule = [(v) => v > 0 && v < 1, 'in (0, 1)'];
export const COUNT: OptionRule = [(v) => Number.isInteger(v) && v >= 1, 'an integer >= 1'];
export const AT_LEAST_ONE: OptionRule = [(v) => v >= 1, '>= 1'];
