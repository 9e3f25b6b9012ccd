/** Small number helpers shared across the worker (one copy in the bundle). */

/** Milliseconds as decision records, live events and the state snapshot show them: two decimals. */
export const round2 = (value: number): number => Math.round(value * 100) / 100;

/** A header's non-negative integer (Content-Length), else undefined: digits only, a safe integer. */
export function headerInteger(value: string | null | undefined): number | undefined {
  if (value === null || value === undefined || !/^\d+$/.test(value.trim())) return undefined;
  const number = Number(value.trim());
  return Number.isSafeInteger(number) ? number : undefined;
}
