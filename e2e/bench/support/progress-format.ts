/**
 * The pure parts of bench progress (./progress.ts): durations for people, the time left
 * estimated from the share done, and the status line itself, cut to the terminal's width
 * (a wrapped line could not be redrawn in place with `\r`).
 */

/** "0 s", "45 s", "2 min 05 s", "1 h 02 min". */
export function formatDuration(ms: number): string {
  const totalSeconds = Math.max(0, Math.round(ms / 1000));
  if (totalSeconds < 60) return `${totalSeconds} s`;
  const totalMinutes = Math.floor(totalSeconds / 60);
  if (totalMinutes < 60) return `${totalMinutes} min ${String(totalSeconds % 60).padStart(2, '0')} s`;
  const minutes = Math.round(totalSeconds / 60) % 60;
  const hours = Math.floor(Math.round(totalSeconds / 60) / 60);
  return `${hours} h ${String(minutes).padStart(2, '0')} min`;
}

/** Below this share done, or this time spent, an estimate is noise: none is shown. */
const MIN_FRACTION_FOR_ESTIMATE = 0.02;
const MIN_ELAPSED_FOR_ESTIMATE_MS = 2000;

/**
 * Time left if the rest goes at the pace so far: elapsed × (1 − f) ÷ f for a share f done.
 * Undefined while too little is done to tell; 0 once everything is.
 */
export function remainingMs(elapsedMs: number, fraction: number): number | undefined {
  if (!Number.isFinite(fraction) || !Number.isFinite(elapsedMs)) return undefined;
  if (fraction >= 1) return 0;
  if (fraction < MIN_FRACTION_FOR_ESTIMATE || elapsedMs < MIN_ELAPSED_FOR_ESTIMATE_MS) return undefined;
  return (elapsedMs * (1 - fraction)) / fraction;
}

export interface StatusLineParts {
  title: string;
  /** Share done, in [0, 1]. */
  fraction: number;
  elapsedMs: number;
  remainingMs: number | undefined;
  /** What runs now ("peak (2/4): 10 policies running 42 s / 150 s"). */
  label: string;
  /** Terminal width; the line is cut to columns − 1 characters. */
  columns?: number | undefined;
}

const BAR_WIDTH = 20;

/** "evaluation [=======>            ]  37% 4 min 10 s, ~7 min 05 s left · peak (2/4): …". */
export function statusLine(parts: StatusLineParts): string {
  const fraction = Math.min(1, Math.max(0, Number.isFinite(parts.fraction) ? parts.fraction : 0));
  const filled = Math.floor(fraction * BAR_WIDTH);
  const bar = fraction >= 1 ? '='.repeat(BAR_WIDTH) : `${'='.repeat(filled)}>${' '.repeat(BAR_WIDTH - filled - 1)}`;
  const percent = `${String(Math.floor(fraction * 100)).padStart(3)}%`;
  const left = parts.remainingMs === undefined ? 'estimating time left' : `~${formatDuration(parts.remainingMs)} left`;
  const line = `${parts.title} [${bar}] ${percent} ${formatDuration(parts.elapsedMs)}, ${left}${parts.label ? ` · ${parts.label}` : ''}`;
  return truncate(line, parts.columns);
}

function truncate(line: string, columns: number | undefined): string {
  if (columns === undefined || columns <= 1) return line;
  const max = columns - 1;
  const characters = Array.from(line);
  return characters.length <= max ? line : `${characters.slice(0, max - 1).join('')}…`;
}
